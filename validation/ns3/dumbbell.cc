// ns-3 side of Shoal's cross-validation: L hosts on switch A, R hosts on switch B (hosts
// numbered left then right, 0..L+R-1), one A-B link at the uplink rate; DCTCP, RED/ECN
// with a cut-off K at every switch egress (the A-B ports included). See common.h.
//
//   dumbbell --trace=flows.csv --out=fct.csv --left=16 --right=8 --linkRate=100Gbps \
//            --uplinkRate=100Gbps --linkDelay=10us --K=720000 --buffer=4000000

#include "common.h"

using namespace ns3;
using namespace shoalval;

int
main(int argc, char* argv[])
{
    Time::SetResolution(Time::PS);
    Params p;
    uint32_t left = 16;
    uint32_t right = 8;
    CommandLine cmd(__FILE__);
    cmd.AddValue("left", "hosts on switch A (numbered first)", left);
    cmd.AddValue("right", "hosts on switch B", right);
    cmd.AddValue("uplinkRate", "rate of the A-B link", p.uplinkRate);
    cmd.AddValue("uplinkDelay", "one-way delay of the A-B link (default: linkDelay)", p.uplinkDelay);
    AddCommonArgs(cmd, p);
    cmd.Parse(argc, argv);
    if (left < 1 || right < 1)
    {
        Fail("--left and --right must be >= 1");
    }
    if (p.uplinkDelay.empty())
    {
        p.uplinkDelay = p.linkDelay;
    }
    uint32_t hosts = left + right;
    auto wall0 = std::chrono::steady_clock::now();
    Replay r;
    r.flows = ReadTrace(p.trace, hosts);
    ConfigureTcp(p);

    NodeContainer sw;
    sw.Create(2); // A, B
    NodeContainer h;
    h.Create(hosts);
    InternetStackHelper stack;
    stack.Install(sw);
    stack.Install(h);

    PointToPointHelper link = Link(p, p.linkRate, p.linkDelay);
    PointToPointHelper uplink = Link(p, p.uplinkRate, p.uplinkDelay);
    TrafficControlHelper swq = SwitchQdisc(p, p.linkRate, p.linkDelay);
    TrafficControlHelper upq = SwitchQdisc(p, p.uplinkRate, p.uplinkDelay);
    TrafficControlHelper hq = HostQdisc(p);
    Ipv4AddressHelper ip;
    std::vector<Ipv4Address> addr(hosts);
    std::vector<Ptr<NetDevice>> swDevs, hostDevs;
    for (uint32_t i = 0; i < hosts; i++)
    {
        Ptr<Node> s = sw.Get(i < left ? 0 : 1);
        NetDeviceContainer d = link.Install(h.Get(i), s);
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
    NetDeviceContainer ab = uplink.Install(sw.Get(0), sw.Get(1));
    upq.Install(ab);
    ip.SetBase("11.0.0.0", "255.255.255.0");
    ip.Assign(ab);
    swDevs.push_back(ab.Get(0));
    swDevs.push_back(ab.Get(1));
    return RunAndReport(p, r, h, addr, swDevs, hostDevs, wall0, "dumbbell");
}
