// Shared code of the ns-3 side of Shoal's cross-validation (star.cc, dumbbell.cc).
//
// Every program reads a flow trace `id,src,dst,bytes,start_ns[,priority]` (header line
// first, hosts numbered 0..N-1), replays it with DCTCP over point-to-point links and
// writes one line per flow `id,fct_ns` (empty fct for flows that did not finish) plus a
// JSON file of counters next to it (`<out>.json`).
//
// Written for ns-3.37 (Debian's libns3-dev). Time resolution is set to picoseconds so
// that serialization times at 100 Gbps (4.32 ns for a 54-byte ACK) are not rounded.

#ifndef SHOAL_VALIDATION_COMMON_H
#define SHOAL_VALIDATION_COMMON_H

#include "ns3/applications-module.h"
#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/traffic-control-module.h"

#include <chrono>
#include <cstdint>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

namespace shoalval
{

using namespace ns3;

struct FlowSpec
{
    uint64_t id;
    uint32_t src;
    uint32_t dst;
    uint64_t bytes;
    int64_t startPs; // start_ns may carry up to 3 decimals (picoseconds)
};

/// Every parameter of a run (the command line fills it).
struct Params
{
    std::string trace;
    std::string out = "fct.csv";
    std::string linkRate = "100Gbps";
    std::string uplinkRate = "100Gbps";
    std::string linkDelay = "10us";
    std::string uplinkDelay = ""; // empty: same as linkDelay
    uint32_t mtu = 9000;          // bytes of a full data packet on the wire (PPP included)
    uint64_t k = 720000;          // ECN threshold, bytes (Shoal's switch.ecn.k)
    uint64_t buffer = 4000000;    // per-port switch buffer, bytes
    uint64_t nicBuffer = 10000000; // host NIC buffer, bytes (Shoal's host.nic_buffer)
    uint32_t initCwnd = 20;       // segments
    std::string rtoMin = "5ms";
    std::string rtoInit = "5ms";  // SYN timeout and RTO before the first RTT sample
    bool sack = true;
    bool timestamps = true;       // TCP timestamps (12 option bytes: header = 54 B)
    bool limitedTransmit = false; // RFC 3042 (Shoal has none)
    bool devQueueComp = true;     // subtract one packet from K and the buffer (see below)
    double dctcpG = 0.0625;
    double dctcpAlphaInit = 1.0;
    std::string stop = "10s";
    std::string detail = "";      // optional per-flow detail CSV
};

inline void
AddCommonArgs(CommandLine& cmd, Params& p)
{
    cmd.AddValue("trace", "flow trace CSV (id,src,dst,bytes,start_ns[,priority])", p.trace);
    cmd.AddValue("out", "output CSV (id,fct_ns); counters go to <out>.json", p.out);
    cmd.AddValue("linkRate", "host-switch link rate", p.linkRate);
    cmd.AddValue("linkDelay", "one-way propagation delay of every host link", p.linkDelay);
    cmd.AddValue("mtu", "bytes of a full data packet on the wire (PPP 2 + IP 20 + TCP 32 + payload)", p.mtu);
    cmd.AddValue("K", "ECN marking threshold in bytes (queue length seen at enqueue)", p.k);
    cmd.AddValue("buffer", "per-port switch buffer in bytes", p.buffer);
    cmd.AddValue("nicBuffer", "host NIC buffer in bytes", p.nicBuffer);
    cmd.AddValue("initCwnd", "initial congestion window, segments", p.initCwnd);
    cmd.AddValue("rtoMin", "minimum RTO", p.rtoMin);
    cmd.AddValue("rtoInit", "SYN timeout / initial RTO", p.rtoInit);
    cmd.AddValue("sack", "enable TCP SACK", p.sack);
    cmd.AddValue("timestamps", "enable TCP timestamps (changes header size: keep on)", p.timestamps);
    cmd.AddValue("limitedTransmit", "enable RFC 3042 limited transmit", p.limitedTransmit);
    cmd.AddValue("devQueueComp",
                 "compensate for the 1-packet NetDevice queue: RED K and buffer are reduced by "
                 "one MTU so they apply to the same bytes as Shoal's queue",
                 p.devQueueComp);
    cmd.AddValue("dctcpG", "DCTCP EWMA gain g", p.dctcpG);
    cmd.AddValue("dctcpAlphaInit", "DCTCP alpha at flow start", p.dctcpAlphaInit);
    cmd.AddValue("stop", "simulated stop time", p.stop);
    cmd.AddValue("detail", "optional per-flow detail CSV (id,fct_ns,rto,fast_recoveries,cwr)", p.detail);
}

[[noreturn]] inline void
Fail(const std::string& msg)
{
    std::cerr << "error: " << msg << std::endl;
    std::exit(2);
}

/// "123.456" (ns) -> 123456 (ps), exactly.
inline int64_t
ParseNsToPs(const std::string& s)
{
    size_t dot = s.find('.');
    std::string ip = s.substr(0, dot);
    std::string fp = dot == std::string::npos ? "" : s.substr(dot + 1);
    while (!fp.empty() && (fp.back() == '\r' || fp.back() == ' '))
    {
        fp.pop_back();
    }
    if (ip.empty() || ip.find_first_not_of("0123456789") != std::string::npos ||
        fp.find_first_not_of("0123456789") != std::string::npos || fp.size() > 3)
    {
        throw std::invalid_argument("start_ns");
    }
    fp.resize(3, '0');
    return std::stoll(ip) * 1000 + std::stoll(fp);
}

inline std::vector<FlowSpec>
ReadTrace(const std::string& path, uint32_t hosts)
{
    if (path.empty())
    {
        Fail("--trace is required");
    }
    std::ifstream in(path);
    if (!in)
    {
        Fail("cannot read trace " + path);
    }
    std::vector<FlowSpec> flows;
    std::string line;
    std::getline(in, line); // header
    if (line.rfind("id,src,dst,bytes,start_ns", 0) != 0)
    {
        Fail("trace " + path + " does not start with the header id,src,dst,bytes,start_ns");
    }
    uint64_t lineno = 1;
    while (std::getline(in, line))
    {
        lineno++;
        if (line.empty() || line == "\r")
        {
            continue;
        }
        std::stringstream ss(line);
        std::string f[5];
        for (auto& s : f)
        {
            if (!std::getline(ss, s, ','))
            {
                Fail(path + ":" + std::to_string(lineno) + ": expected 5 columns");
            }
        }
        FlowSpec fl;
        try
        {
            fl.id = std::stoull(f[0]);
            fl.src = std::stoul(f[1]);
            fl.dst = std::stoul(f[2]);
            fl.bytes = std::stoull(f[3]);
            fl.startPs = ParseNsToPs(f[4]);
        }
        catch (...)
        {
            Fail(path + ":" + std::to_string(lineno) + ": malformed number");
        }
        if (fl.src >= hosts || fl.dst >= hosts || fl.src == fl.dst || fl.bytes == 0)
        {
            Fail(path + ":" + std::to_string(lineno) + ": bad src/dst/bytes for " +
                 std::to_string(hosts) + " hosts");
        }
        flows.push_back(fl);
    }
    return flows;
}

/// TCP and DCTCP defaults: call before any socket exists.
inline void
ConfigureTcp(const Params& p)
{
    const uint32_t segment = p.mtu - 54; // PPP 2 + IP 20 + TCP 20 + timestamp option 12
    Config::SetDefault("ns3::TcpL4Protocol::SocketType", TypeIdValue(TcpDctcp::GetTypeId()));
    Config::SetDefault("ns3::TcpL4Protocol::RecoveryType",
                       TypeIdValue(TcpClassicRecovery::GetTypeId()));
    Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(segment));
    Config::SetDefault("ns3::TcpSocket::InitialCwnd", UintegerValue(p.initCwnd));
    Config::SetDefault("ns3::TcpSocket::DelAckCount", UintegerValue(1));
    Config::SetDefault("ns3::TcpSocket::SndBufSize", UintegerValue(1u << 30));
    Config::SetDefault("ns3::TcpSocket::RcvBufSize", UintegerValue(1u << 30));
    Config::SetDefault("ns3::TcpSocket::ConnTimeout", TimeValue(Time(p.rtoInit)));
    Config::SetDefault("ns3::TcpSocket::TcpNoDelay", BooleanValue(true));
    Config::SetDefault("ns3::TcpSocketBase::MinRto", TimeValue(Time(p.rtoMin)));
    Config::SetDefault("ns3::TcpSocketBase::ClockGranularity", TimeValue(MicroSeconds(1)));
    Config::SetDefault("ns3::TcpSocketBase::Sack", BooleanValue(p.sack));
    Config::SetDefault("ns3::TcpSocketBase::Timestamp", BooleanValue(p.timestamps));
    Config::SetDefault("ns3::TcpSocketBase::WindowScaling", BooleanValue(true));
    Config::SetDefault("ns3::TcpSocketBase::LimitedTransmit", BooleanValue(p.limitedTransmit));
    Config::SetDefault("ns3::TcpSocketBase::ReTxThreshold", UintegerValue(3));
    Config::SetDefault("ns3::TcpSocketBase::UseEcn", EnumValue(TcpSocketState::On));
    Config::SetDefault("ns3::RttEstimator::InitialEstimation", TimeValue(Time(p.rtoInit)));
    Config::SetDefault("ns3::TcpDctcp::DctcpShiftG", DoubleValue(p.dctcpG));
    Config::SetDefault("ns3::TcpDctcp::DctcpAlphaOnInit", DoubleValue(p.dctcpAlphaInit));
}

/// A point-to-point helper for links of this rate and delay. The NetDevice queue holds
/// one packet so that the queue disc above it holds the buffer.
inline PointToPointHelper
Link(const Params& p, const std::string& rate, const std::string& delay)
{
    PointToPointHelper h;
    h.SetDeviceAttribute("DataRate", StringValue(rate));
    h.SetDeviceAttribute("Mtu", UintegerValue(p.mtu - 2)); // IP MTU: the PPP header is 2 B
    h.SetChannelAttribute("Delay", TimeValue(Time(delay)));
    h.SetQueue("ns3::DropTailQueue<Packet>", "MaxSize", QueueSizeValue(QueueSize("1p")));
    return h;
}

/// One packet of the egress backlog sits in the 1-packet NetDevice queue (behind the one
/// being serialized), so the queue disc holds one packet less than Shoal's egress queue
/// (which holds everything not yet being serialized). With devQueueComp the thresholds
/// are reduced by one full packet so that they apply to the same backlog.
inline uint64_t
Comp(const Params& p)
{
    return p.devQueueComp ? p.mtu : 0;
}

/// The switch egress queue disc: RED with QW = 1 and MinTh = MaxTh = K in bytes, i.e.
/// "mark every ECN-capable packet that arrives to a queue of >= K bytes" (RED decides at
/// enqueue on the queue before the packet), tail drop at the buffer size.
inline TrafficControlHelper
SwitchQdisc(const Params& p, const std::string& rate, const std::string& delay)
{
    double k = double(p.k - std::min(p.k, Comp(p)));
    TrafficControlHelper tch;
    tch.SetRootQueueDisc("ns3::RedQueueDisc",
                         "MaxSize", QueueSizeValue(QueueSize(QueueSizeUnit::BYTES, p.buffer - Comp(p))),
                         "MinTh", DoubleValue(k),
                         "MaxTh", DoubleValue(k),
                         "QW", DoubleValue(1.0),
                         "UseEcn", BooleanValue(true),
                         "UseHardDrop", BooleanValue(false),
                         "Gentle", BooleanValue(false),
                         "MeanPktSize", UintegerValue(p.mtu),
                         "LinkBandwidth", DataRateValue(DataRate(rate)),
                         "LinkDelay", TimeValue(Time(delay)));
    return tch;
}

/// The host NIC: a FIFO of nicBuffer bytes (Shoal's host.nic_buffer, tail drop). With the
/// one-packet device queue it holds the same bytes as Shoal's NIC queue.
inline TrafficControlHelper
HostQdisc(const Params& p)
{
    TrafficControlHelper tch;
    tch.SetRootQueueDisc("ns3::FifoQueueDisc",
                         "MaxSize",
                         QueueSizeValue(QueueSize(QueueSizeUnit::BYTES, p.nicBuffer - Comp(p))));
    return tch;
}

/// State of the replay, shared with the trace callbacks.
struct Replay
{
    std::vector<FlowSpec> flows;
    std::vector<uint64_t> received;
    std::vector<int64_t> finishPs; // -1: not finished
    std::vector<uint32_t> rto;
    std::vector<uint32_t> recoveries;
    std::vector<uint32_t> cwr;
    uint64_t finished = 0;
};

inline Replay* g_replay = nullptr;

inline void
SinkRx(uint32_t i, Ptr<const Packet> pkt, const Address&)
{
    Replay& r = *g_replay;
    r.received[i] += pkt->GetSize();
    if (r.finishPs[i] < 0 && r.received[i] >= r.flows[i].bytes)
    {
        r.finishPs[i] = Simulator::Now().GetPicoSeconds();
        if (++r.finished == r.flows.size())
        {
            Simulator::Stop();
        }
    }
}

inline void
CongStateChange(uint32_t i, TcpSocketState::TcpCongState_t, TcpSocketState::TcpCongState_t now)
{
    Replay& r = *g_replay;
    if (now == TcpSocketState::CA_LOSS)
    {
        r.rto[i]++;
    }
    else if (now == TcpSocketState::CA_RECOVERY)
    {
        r.recoveries[i]++;
    }
    else if (now == TcpSocketState::CA_CWR)
    {
        r.cwr[i]++;
    }
}

inline void
HookSocket(uint32_t i, Ptr<BulkSendApplication> app)
{
    Ptr<Socket> s = app->GetSocket();
    if (s)
    {
        s->TraceConnectWithoutContext("CongState", MakeBoundCallback(&CongStateChange, i));
    }
}

/// Installs one PacketSink per flow on the receiver (port 10000 + index, wrapping past
/// 65535 onto the next range is avoided by failing) and one BulkSend on the sender.
inline void
InstallFlows(Replay& r, const NodeContainer& hosts, const std::vector<Ipv4Address>& addr)
{
    g_replay = &r;
    r.received.assign(r.flows.size(), 0);
    r.finishPs.assign(r.flows.size(), -1);
    r.rto.assign(r.flows.size(), 0);
    r.recoveries.assign(r.flows.size(), 0);
    r.cwr.assign(r.flows.size(), 0);
    // Ports are per receiver: count flows per destination.
    std::vector<uint32_t> nextPort(hosts.GetN(), 1000);
    for (uint32_t i = 0; i < r.flows.size(); i++)
    {
        const FlowSpec& f = r.flows[i];
        uint16_t port;
        if (nextPort[f.dst] >= 65000)
        {
            Fail("more than 64000 flows to one host");
        }
        port = uint16_t(nextPort[f.dst]++);
        PacketSinkHelper sink("ns3::TcpSocketFactory", InetSocketAddress(Ipv4Address::GetAny(), port));
        ApplicationContainer sa = sink.Install(hosts.Get(f.dst));
        sa.Start(Seconds(0));
        sa.Get(0)->TraceConnectWithoutContext("Rx", MakeBoundCallback(&SinkRx, i));

        BulkSendHelper bulk("ns3::TcpSocketFactory", InetSocketAddress(addr[f.dst], port));
        bulk.SetAttribute("MaxBytes", UintegerValue(f.bytes));
        bulk.SetAttribute("SendSize", UintegerValue(1u << 20));
        ApplicationContainer ba = bulk.Install(hosts.Get(f.src));
        Time start = PicoSeconds(f.startPs);
        ba.Start(start);
        Ptr<BulkSendApplication> app = DynamicCast<BulkSendApplication>(ba.Get(0));
        // The socket exists once the application started (same instant, scheduled after).
        Simulator::Schedule(start + PicoSeconds(1), &HookSocket, i, app);
    }
}

/// ECN marks on packets smaller than 200 B (SYN, SYN-ACK, pure ACKs): evidence of
/// whether ns-3's DCTCP sends control packets ECN-capable.
inline uint64_t g_controlMarks = 0;

inline void
QdiscMark(Ptr<const QueueDiscItem> item, const char*)
{
    if (item->GetSize() < 200)
    {
        g_controlMarks++;
    }
}

inline void
HookSwitchQdiscs(const std::vector<Ptr<NetDevice>>& devs)
{
    for (auto& d : devs)
    {
        Ptr<QueueDisc> q = d->GetNode()->GetObject<TrafficControlLayer>()->GetRootQueueDiscOnDevice(d);
        q->TraceConnectWithoutContext("Mark", MakeCallback(&QdiscMark));
    }
}

struct Counters
{
    uint64_t switchDrops = 0;
    uint64_t switchDropBytes = 0;
    uint64_t switchMarks = 0;
    uint64_t nicDrops = 0;
    uint64_t deviceDrops = 0;
};

inline void
AddQdisc(Counters& c, Ptr<QueueDisc> q, bool isSwitch)
{
    if (!q)
    {
        return;
    }
    const QueueDisc::Stats& s = q->GetStats();
    if (isSwitch)
    {
        c.switchDrops += s.nTotalDroppedPackets;
        c.switchDropBytes += s.nTotalDroppedBytes;
        c.switchMarks += s.nTotalMarkedPackets;
    }
    else
    {
        c.nicDrops += s.nTotalDroppedPackets;
    }
}

inline void
AddDevice(Counters& c, Ptr<NetDevice> d)
{
    Ptr<PointToPointNetDevice> p = DynamicCast<PointToPointNetDevice>(d);
    if (p && p->GetQueue())
    {
        c.deviceDrops += p->GetQueue()->GetTotalDroppedPackets();
    }
}

/// Writes `<out>` (id,fct_ns), `<out>.json` and the optional detail file.
inline void
WriteResults(const Params& p, const Replay& r, const Counters& c, double wallS, const std::string& topo)
{
    std::ofstream out(p.out);
    if (!out)
    {
        Fail("cannot write " + p.out);
    }
    out << "id,fct_ns\n" << std::fixed << std::setprecision(3);
    for (uint32_t i = 0; i < r.flows.size(); i++)
    {
        out << r.flows[i].id << ",";
        if (r.finishPs[i] >= 0)
        {
            out << double(r.finishPs[i] - r.flows[i].startPs) / 1000.0;
        }
        out << "\n";
    }
    if (!p.detail.empty())
    {
        std::ofstream d(p.detail);
        d << "id,fct_ns,rto,fast_recoveries,cwr\n" << std::fixed << std::setprecision(3);
        for (uint32_t i = 0; i < r.flows.size(); i++)
        {
            d << r.flows[i].id << ",";
            if (r.finishPs[i] >= 0)
            {
                d << double(r.finishPs[i] - r.flows[i].startPs) / 1000.0;
            }
            d << "," << r.rto[i] << "," << r.recoveries[i] << "," << r.cwr[i] << "\n";
        }
    }
    uint64_t rto = 0, rec = 0;
    for (uint32_t i = 0; i < r.flows.size(); i++)
    {
        rto += r.rto[i];
        rec += r.recoveries[i];
    }
    std::ofstream j(p.out + ".json");
    j << "{\n"
      << "  \"topology\": \"" << topo << "\",\n"
      << "  \"flows\": " << r.flows.size() << ",\n"
      << "  \"finished\": " << r.finished << ",\n"
      << "  \"switch_drops\": " << c.switchDrops << ",\n"
      << "  \"switch_drop_bytes\": " << c.switchDropBytes << ",\n"
      << "  \"ecn_marks\": " << c.switchMarks << ",\n"
      << "  \"ecn_marks_control\": " << g_controlMarks << ",\n"
      << "  \"nic_drops\": " << c.nicDrops << ",\n"
      << "  \"device_queue_drops\": " << c.deviceDrops << ",\n"
      << "  \"timeouts\": " << rto << ",\n"
      << "  \"fast_recoveries\": " << rec << ",\n"
      << "  \"sim_time_s\": " << Simulator::Now().GetSeconds() << ",\n"
      << "  \"wall_s\": " << wallS << "\n"
      << "}\n";
    std::cerr << topo << ": " << r.finished << "/" << r.flows.size() << " flows finished, switch drops "
              << c.switchDrops << ", ECN marks " << c.switchMarks << ", NIC drops " << c.nicDrops
              << ", device drops " << c.deviceDrops << ", timeouts " << rto << ", wall " << wallS
              << " s" << std::endl;
}

/// Runs the replay on a built network and writes its results: the part of every
/// topology's program after the links are laid.
inline int
RunAndReport(const Params& p,
             Replay& r,
             const NodeContainer& hosts,
             const std::vector<Ipv4Address>& addr,
             const std::vector<Ptr<NetDevice>>& swDevs,
             const std::vector<Ptr<NetDevice>>& hostDevs,
             std::chrono::steady_clock::time_point wall0,
             const std::string& topo)
{
    Ipv4GlobalRoutingHelper::PopulateRoutingTables();
    HookSwitchQdiscs(swDevs);
    InstallFlows(r, hosts, addr);
    Simulator::Stop(Time(p.stop));
    Simulator::Run();

    Counters c;
    for (auto& d : swDevs)
    {
        AddQdisc(c, d->GetNode()->GetObject<TrafficControlLayer>()->GetRootQueueDiscOnDevice(d), true);
        AddDevice(c, d);
    }
    for (auto& d : hostDevs)
    {
        AddQdisc(c, d->GetNode()->GetObject<TrafficControlLayer>()->GetRootQueueDiscOnDevice(d), false);
        AddDevice(c, d);
    }
    double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
    WriteResults(p, r, c, wall, topo);
    Simulator::Destroy();
    return 0;
}

} // namespace shoalval

#endif
