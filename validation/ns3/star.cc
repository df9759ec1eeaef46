// ns-3 side of Shoal's cross-validation: N hosts on one switch (a router node with one
// point-to-point link per host), DCTCP, RED/ECN with a cut-off K at every switch egress.
// See common.h and ../README.md.
//
//   star --trace=flows.csv --out=fct.csv --hosts=32 --linkRate=100Gbps --linkDelay=10us \
//        --mtu=9000 --K=720000 --buffer=4000000 --initCwnd=20 --rtoMin=5ms --sack=true

#include "common.h"

using namespace ns3;
using namespace shoalval;

int
main(int argc, char* argv[])
{
    Time::SetResolution(Time::PS);
    Params p;
    uint32_t hosts = 32;
    CommandLine cmd(__FILE__);
    cmd.AddValue("hosts", "number of hosts", hosts);
    AddCommonArgs(cmd, p);
    cmd.Parse(argc, argv);
    if (hosts < 2)
    {
        Fail("--hosts must be >= 2");
    }
    auto wall0 = std::chrono::steady_clock::now();
    Replay r;
    r.flows = ReadTrace(p.trace, hosts);
    ConfigureTcp(p);

    NodeContainer sw;
    sw.Create(1);
    NodeContainer h;
    h.Create(hosts);
    InternetStackHelper stack;
    stack.Install(sw);
    stack.Install(h);

    PointToPointHelper link = Link(p, p.linkRate, p.linkDelay);
    TrafficControlHelper swq = SwitchQdisc(p, p.linkRate, p.linkDelay);
    TrafficControlHelper hq = HostQdisc(p);
    Ipv4AddressHelper ip;
    std::vector<Ipv4Address> addr(hosts);
    std::vector<Ptr<NetDevice>> swDevs, hostDevs;
    for (uint32_t i = 0; i < hosts; i++)
    {
        NetDeviceContainer d = link.Install(h.Get(i), sw.Get(0)); // d[0] host, d[1] switch
        hq.Install(d.Get(0));
        swq.Install(d.Get(1));
        std::ostringstream net;
        net << "10." << (i / 256) << "." << (i % 256) << ".0";
        ip.SetBase(net.str().c_str(), "255.255.255.0");
        Ipv4InterfaceContainer ifc = ip.Assign(d);
        addr[i] = ifc.GetAddress(0);
        hostDevs.push_back(d.Get(0));
        swDevs.push_back(d.Get(1));
    }
    return RunAndReport(p, r, h, addr, swDevs, hostDevs, wall0, "star");
}
