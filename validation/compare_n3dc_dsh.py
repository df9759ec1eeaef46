#!/usr/bin/env python3
"""The DSH paper's figs. 5, 6, 12, 13 and 14 in ns3-datacenter, SIH against DSH, on the same
flows as Shoal.

    python validation/compare_n3dc_dsh.py --n3dc /path/to/ns3-datacenter/simulator/ns-3.39 \\
        --build [--experiment fig12|fig14|fig13|fig5|fig6] [--schemes sih_dcqcn,dsh_dcqcn] \\
        [--seeds 1-10] [--stop 100ms] [--load 0.6] [--duration 1ms] [--flows N] [--out DIR]

Why: where Shoal and the paper disagree (fig. 12: the paper's DSH avoids 96% of
deadlocks under DCQCN, Shoal's none; fig. 14: the paper's DSH speeds DCQCN's background
flows up, Shoal's slows them down; fig. 13: the paper's SIH hurts PowerTCP's innocent
flow; fig. 5: the paper's 14 MB buffer costs PowerTCP 78%; fig. 6: the paper's median
headroom use is 4.96%), the same setup runs in an independent simulator. ns3-datacenter
(the HPCC code base the DSH paper's simulations build on) has SIH's static headroom but
not DSH, so ``--build`` adds DSH to its switch MMU as the paper's section IV states it
(the C++ below, written for this comparison with the rules of Shoal's
``switch/flow_control/dsh.rs``; off unless a switch sets ``dsh``), with records of static
headroom's episodes and of PAUSE frames sent, and builds a program that sets up the
paper's Tomahawk MMU, watches for deadlocks and samples one port. The rest is the
reference's own: RDMA NICs, DCQCN (its cc mode 1, no window) and PowerTCP, PFC frames
and their timing, round-robin egress queues, ECMP.

Per run and seed: ``shoal trace`` draws the experiment's flows (its full mode's scenario;
fig14 at background load ``--load``, fig5 at each of ``--buffers``); the reference gets
the scenario's fabric without its failed links, each flow in its trace's priority, the
shared pool (``pool_size``, or what reserves and headroom leave of the 16 MiB chip), the
reserve per queue, alpha 1/16, and eta = 2 (C D + MTU) + 3,840 B per port from the port's
rate (SIH: per lossless queue; DSH: per port, as insurance), RED as the scenario's.
Compared: fig12, the fraction of runs that deadlock (a cycle of switches, each holding
packets in a queue toward the next that its downstream has PAUSEd for 1 ms, Shoal's
``deadlock_after``, dated from the cycle's last pause; the run ends there); fig14, the
mean FCT of background (classes 2-7) and fan-in (class 1) flows and DSH's over SIH's;
fig13, the innocent flow's lowest rate after the burst over its rate before, and S1's
PAUSE frames to S0; fig5, the mean FCT and the smallest buffer's over the largest's;
fig6, the median and 99th percentile of static headroom's peak / eta over its episodes.
Shoal runs the same scenario.

Writes ``comparison.json`` and every input into ``--out`` (default
``validation/results/n3dc_dsh_<experiment>``). A run already made with the same inputs and
program is read back, so an interrupted comparison resumes. Exit status: 0 when the
comparison ran, 1 when ns3-datacenter or Shoal is missing or fails, 2 on bad arguments.
"""

from __future__ import annotations

import argparse
import copy
import hashlib
import json
import math
import re
import sys
from pathlib import Path

from _common import N3DC_CC_FLAGS, rate_bps
from compare_n3dc import START_OFFSET_S, n3dc_files, write_n3dc_config
from compare_n3dc_t1 import (
    ACK_HIGH_PRIO_ENV,
    read_n3dc_fct_by_sport,
    sorted_trace,
    toml_document,
    write_t1_topology,
)
from compare_n3dc_workload import children_cpu_s, red_maps, run_n3dc, write_n3dc_flows
from compare_ns3 import UserError, parse_size, parse_time_s, run, run_guarded, shoal_cmd
from time_n3dc import BUILT, PROGRAMS, build_targets, write_if_changed, write_program

HERE = Path(__file__).resolve().parent
EXPERIMENT = "dsh/fig12"
SCHEMES = ("sih_dcqcn", "dsh_dcqcn", "sih_powertcp", "dsh_powertcp")
# The reference's flags for the controls of the schemes (the paper's DCQCN and PowerTCP).
N3DC_FLAGS = {cc: N3DC_CC_FLAGS[cc] for cc in ("dcqcn", "powertcp")}
PROGRAM = "powertcp-evaluation-dsh"
MODEL = Path("src/point-to-point/model")
MARK = "Shoal's validation/compare_n3dc_dsh.py"

# ---- DSH in the reference's MMU ----------------------------------------------------------

MMU_DECLS = """\
	// ---- DSH (dynamic and shared headroom), added by Shoal's validation/compare_n3dc_dsh.py ----
	// Off unless `dsh` is set. Each ingress port keeps dshEta[port] of insurance headroom; the
	// rest of ingressPool (less the reserves) is shared under T = dshAlpha x (shared pool -
	// shared bytes in use). A queue PAUSEs its class above X_qoff = T - eta; a port PAUSEs every
	// lossless class while its queues' shared bytes exceed dshQueues x T or its insurance holds
	// bytes; a paused port's arrivals go to its insurance.
	bool dsh = false;
	double dshAlpha = 1.0 / 16;
	uint32_t dshQueues = 7;
	uint64_t dshEta[pCnt] = {};
	uint64_t dshInsUsed[pCnt][qCnt] = {};
	uint64_t dshPortInsUsed[pCnt] = {};
	uint64_t dshInsTotalUsed = 0;
	bool dshQueuePaused[pCnt][qCnt] = {};
	bool dshPortPaused[pCnt] = {};
	uint64_t dshPortPauses = 0;
	uint64_t DshShared(uint32_t port, uint32_t q);
	uint64_t DshThreshold();
	bool DshAdmit(uint32_t port, uint32_t q, uint32_t psize);
	void DshEnqueue(uint32_t port, uint32_t q, uint32_t psize);
	void DshDequeue(uint32_t port, uint32_t q, uint32_t psize);
	void DshUpdate(uint32_t port);
	// Static headroom's episodes (from its first byte until empty), for fig. 6: the most
	// bytes each held, counted by (xoff << 32 | peak).
	uint64_t shoalPeak[pCnt][qCnt] = {};
	uint64_t shoalPausesSent[pCnt] = {};
	std::unordered_map<uint64_t, uint64_t> shoalPeaks;
	void ShoalNoteHeadroom(uint32_t port, uint32_t q) {
		shoalPeak[port][q] = std::max(shoalPeak[port][q], xoffUsed[port][q]);
		if (xoffUsed[port][q] == 0 && shoalPeak[port][q] > 0) {
			shoalPeaks[xoff[port][q] << 32 | shoalPeak[port][q]]++;
			shoalPeak[port][q] = 0;
		}
	}
	bool DshWantsPaused(uint32_t port, uint32_t q) {
		return dshQueuePaused[port][q] || dshPortPaused[port];
	}
"""

MMU_DEFS = """
// ---- DSH, added by Shoal's validation/compare_n3dc_dsh.py (see switch-mmu.h) ----
uint64_t SwitchMmu::DshShared(uint32_t port, uint32_t q) {
	uint64_t held = GetIngressReservedUsed(port, q) + dshInsUsed[port][q];
	return ingress_bytes[port][q] > held ? ingress_bytes[port][q] - held : 0;
}

uint64_t SwitchMmu::DshThreshold() {
	uint64_t pool = ingressPool - totalIngressReserved;
	uint64_t held = totalIngressReservedUsed + dshInsTotalUsed;
	uint64_t used = totalUsed > held ? totalUsed - held : 0;
	return used < pool ? uint64_t(dshAlpha * double(pool - used)) : 0;
}

bool SwitchMmu::DshAdmit(uint32_t port, uint32_t q, uint32_t psize) {
	if (dshPortPaused[port])
		return dshPortInsUsed[port] + psize <= dshEta[port];
	if (ingress_bytes[port][q] + psize <= reserveIngress[port][q])
		return true;
	uint64_t pool = ingressPool - totalIngressReserved;
	uint64_t held = totalIngressReservedUsed + dshInsTotalUsed;
	uint64_t used = totalUsed > held ? totalUsed - held : 0;
	return used + psize <= pool;
}

void SwitchMmu::DshEnqueue(uint32_t port, uint32_t q, uint32_t psize) {
	totalIngressReservedUsed -= GetIngressReservedUsed(port, q);
	ingress_bytes[port][q] += psize;
	totalUsed += psize;
	totalIngressReservedUsed += GetIngressReservedUsed(port, q);
	if (dshPortPaused[port]) {
		dshInsUsed[port][q] += psize;
		dshPortInsUsed[port] += psize;
		dshInsTotalUsed += psize;
	}
}

void SwitchMmu::DshDequeue(uint32_t port, uint32_t q, uint32_t psize) {
	totalIngressReservedUsed -= GetIngressReservedUsed(port, q);
	ingress_bytes[port][q] -= std::min<uint64_t>(psize, ingress_bytes[port][q]);
	totalUsed -= std::min<uint64_t>(psize, totalUsed);
	totalIngressReservedUsed += GetIngressReservedUsed(port, q);
	uint64_t insurance = std::min<uint64_t>(psize, dshInsUsed[port][q]);
	dshInsUsed[port][q] -= insurance;
	dshPortInsUsed[port] -= insurance;
	dshInsTotalUsed -= insurance;
}

void SwitchMmu::DshUpdate(uint32_t port) {
	uint64_t t = DshThreshold();
	uint64_t xq = t > dshEta[port] ? t - dshEta[port] : 0;
	uint64_t sum = 0;
	for (uint32_t q = 1; q < qCnt; q++) {
		uint64_t s = DshShared(port, q);
		sum += s;
		if (!dshQueuePaused[port][q] && s > xq)
			dshQueuePaused[port][q] = true;
		else if (dshQueuePaused[port][q] && (s < xq || s == 0))
			dshQueuePaused[port][q] = false;
	}
	uint64_t xp = dshQueues * t;
	if (!dshPortPaused[port] && (sum > xp || dshPortInsUsed[port] > 0)) {
		dshPortPaused[port] = true;
		dshPortPauses++;
	}
	else if (dshPortPaused[port] && (sum < xp || sum == 0) && dshPortInsUsed[port] == 0)
		dshPortPaused[port] = false;
}
"""

NODE_SYNC = """\
// DSH's frames for one ingress port, added by Shoal's validation/compare_n3dc_dsh.py:
// one per lossless class whose wanted state changed (a port-level PAUSE goes out as a
// PAUSE of every lossless class).
static void DshSyncPort(Ptr<SwitchMmu> mmu, Ptr<QbbNetDevice> device, uint32_t port) {
	mmu->DshUpdate(port);
	for (uint32_t q = 1; q < SwitchMmu::qCnt; q++) {
		bool want = mmu->DshWantsPaused(port, q);
		if (want != bool(mmu->paused[port][q])) {
			device->SendPfc(q, want ? 0 : 1);
			mmu->shoalPausesSent[port] += want;
			mmu->paused[port][q] = want;
		}
	}
}

"""
SYNC = "DshSyncPort(m_mmu, DynamicCast<QbbNetDevice>(m_devices[inDev]), inDev);"
ADMIT = (
    "if (m_mmu->CheckIngressAdmission(inDev, qIndex, p->GetSize(), found,unsched) "
    "&& m_mmu->CheckEgressAdmission",
    "if (m_mmu->dsh) {\n"
    "\t\t\t\tif (!m_mmu->DshAdmit(inDev, qIndex, p->GetSize())) return; // Drop\n"
    "\t\t\t\tm_mmu->DshEnqueue(inDev, qIndex, p->GetSize());\n"
    "\t\t\t\tm_mmu->UpdateEgressAdmission(idx, qIndex, p->GetSize(), found);\n"
    f"\t\t\t\t{SYNC}\n"
    "\t\t\t} else if (m_mmu->CheckIngressAdmission(inDev, qIndex, p->GetSize(), found,unsched) "
    "&& m_mmu->CheckEgressAdmission",
)
DEQUEUE = (
    "\t\tm_mmu->RemoveFromIngressAdmission(inDev, qIndex, p->GetSize(), found);\n",
    "\t\tif (m_mmu->dsh) m_mmu->DshDequeue(inDev, qIndex, p->GetSize());\n"
    "\t\telse m_mmu->RemoveFromIngressAdmission(inDev, qIndex, p->GetSize(), found);\n"
    "\t\tm_mmu->ShoalNoteHeadroom(inDev, qIndex);\n",
)
SET_PAUSE = (
    "\tpaused[port][qIndex] = true;\n}",
    "\tpaused[port][qIndex] = true;\n\tshoalPausesSent[port]++;\n}",
)
ENQUEUE = (
    "m_mmu->UpdateIngressAdmission(inDev, qIndex, p->GetSize(), found, unsched);\n",
    "m_mmu->UpdateIngressAdmission(inDev, qIndex, p->GetSize(), found, unsched);\n"
    "\t\t\t\tm_mmu->ShoalNoteHeadroom(inDev, qIndex);\n",
)
RESUME = (
    "\t\tCheckAndSendResume(inDev, qIndex);\n",
    f"\t\tif (m_mmu->dsh) {SYNC}\n\t\telse CheckAndSendResume(inDev, qIndex);\n",
)

# ---- the program: the reference's burst program with the paper's MMU and a deadlock watch ----

SWITCH_CONFIG_START = "\t\t\tuint32_t shift = 3; // by default 1/8\n"
SWITCH_CONFIG_END = "\t\t\tsw->m_mmu->SetEgressLosslessPool(buffer_size * 1024 * 1024);\n"
SWITCH_CONFIG = """\
			// Shoal's validation/compare_n3dc_dsh.py: the DSH paper's Tomahawk MMU, from the
			// environment. SHOAL_RESERVE is the private bytes of each queue; the shared pool is
			// SHOAL_POOL bytes (Shoal's switch.pool_size) or what the switch's reserves and
			// headroom leave of SHOAL_BUFFER (Shoal's switch.buffer, the whole chip);
			// eta = 2 (C D + MTU) + 3840 B per port from its own rate and delay (Eq. 1). SIH
			// gives every lossless queue (1-7) eta of headroom, DSH every port eta of insurance.
			double alpha = atof(getenv("SHOAL_ALPHA"));
			bool dsh = std::string(getenv("SHOAL_HEADROOM")) == "dsh";
			uint64_t pool = getenv("SHOAL_POOL") ? strtoull(getenv("SHOAL_POOL"), nullptr, 10) : 0;
			uint64_t reserve = strtoull(getenv("SHOAL_RESERVE"), nullptr, 10);
			sw->m_mmu->SetAlphaIngress(alpha);
			sw->m_mmu->SetAlphaEgress(UINT16_MAX);
			sw->m_mmu->SetXonOffset(1);
			sw->m_mmu->dsh = dsh;
			sw->m_mmu->dshAlpha = alpha;
			uint64_t totalHeadroom = 0, totalReserve = 0;
			for (uint32_t j = 1; j < sw->GetNDevices(); j++) {
				Ptr<QbbNetDevice> dev = DynamicCast<QbbNetDevice>(sw->GetDevice(j));
				uint64_t rate = dev->GetDataRate().GetBitRate();
				NS_ASSERT_MSG(rate2kmin.find(rate) != rate2kmin.end(), "kmin for each rate");
				sw->m_mmu->ConfigEcn(j, rate2kmin[rate], rate2kmax[rate], rate2pmax[rate]);
				Ptr<QbbChannel> link = DynamicCast<QbbChannel>(dev->GetChannel());
				uint64_t delay_ns = link->GetDelay().GetTimeStep();
				uint64_t eta = 2 * (rate / 8 * delay_ns / 1000000000 + 1500) + 3840;
				if (dsh) {
					sw->m_mmu->dshEta[j] = eta;
					totalHeadroom += eta;
				}
				for (uint32_t qu = 0; qu < 8; qu++) {
					sw->m_mmu->SetReserved(reserve, j, qu, "ingress");
					totalReserve += reserve;
					if (!dsh && qu > 0) {
						sw->m_mmu->SetHeadroom(eta, j, qu);
						totalHeadroom += eta;
					}
				}
			}
			if (!pool)
				pool = strtoull(getenv("SHOAL_BUFFER"), nullptr, 10) - totalReserve - totalHeadroom;
			sw->m_mmu->SetIngressPool(pool + totalReserve);
			sw->m_mmu->SetBufferPool(pool + totalReserve + totalHeadroom);
			sw->m_mmu->SetEgressLosslessPool(pool + totalReserve + totalHeadroom);
"""
WATCH = """\
// Shoal's validation/compare_n3dc_dsh.py: every 10 us, a switch's egress queue that
// holds packets while its downstream switch has PAUSEd it without a break for
// SHOAL_DEADLOCK_NS is stuck; a cycle of switches joined by stuck queues is a deadlock,
// reported with its onset (when the cycle's last pause began), and the run ends.
static std::map<std::tuple<uint32_t, uint32_t, uint32_t>, int64_t> shoal_paused_since;

// The node at the other end of a switch's device j.
static Ptr<Node> ShoalPeer(Ptr<SwitchNode> sw, uint32_t j) {
	Ptr<QbbNetDevice> dev = DynamicCast<QbbNetDevice>(sw->GetDevice(j));
	Ptr<QbbChannel> ch = DynamicCast<QbbChannel>(dev->GetChannel());
	return (ch->GetDevice(0) == dev ? ch->GetDevice(1) : ch->GetDevice(0))->GetNode();
}

// SHOAL_TX_SAMPLE = "<switch> <peer> <interval ns>": the bytes the switch has sent on its
// port to the peer (its QbbDequeue trace), every interval (fig. 13's innocent flow).
static uint64_t shoal_tx_bytes = 0;

static void ShoalCountTx(Ptr<const Packet> p, uint32_t q) {
	shoal_tx_bytes += p->GetSize();
}

static void ShoalTxSample(int64_t every_ns) {
	int64_t now = Simulator::Now().GetTimeStep();
	std::cout << "SHOAL_TX " << now << " " << shoal_tx_bytes << std::endl;
	Simulator::Schedule(NanoSeconds(every_ns), ShoalTxSample, every_ns);
}

static bool ShoalFindCycle(std::map<uint32_t, std::map<uint32_t, int64_t>> &stuck, uint32_t start,
                           uint32_t at, std::vector<uint32_t> &path) {
	for (auto &next : stuck[at]) {
		if (next.first == start) return true;
		if (std::find(path.begin(), path.end(), next.first) != path.end()) continue;
		path.push_back(next.first);
		if (ShoalFindCycle(stuck, start, next.first, path)) return true;
		path.pop_back();
	}
	return false;
}

static void ShoalDeadlockWatch(int64_t after_ns) {
	int64_t now = Simulator::Now().GetTimeStep();
	std::map<uint32_t, std::map<uint32_t, int64_t>> stuck;
	for (uint32_t i = 0; i < n.GetN(); i++) {
		if (!n.Get(i)->GetNodeType()) continue;
		Ptr<SwitchNode> sw = DynamicCast<SwitchNode>(n.Get(i));
		for (uint32_t j = 1; j < sw->GetNDevices(); j++) {
			Ptr<QbbNetDevice> dev = DynamicCast<QbbNetDevice>(sw->GetDevice(j));
			Ptr<QbbChannel> ch = DynamicCast<QbbChannel>(dev->GetChannel());
			Ptr<NetDevice> other = ch->GetDevice(0) == dev ? ch->GetDevice(1) : ch->GetDevice(0);
			if (!other->GetNode()->GetNodeType()) continue;
			Ptr<SwitchNode> peer = DynamicCast<SwitchNode>(other->GetNode());
			for (uint32_t q = 1; q < 8; q++) {
				auto key = std::make_tuple(i, j, q);
				bool paused = peer->m_mmu->paused[other->GetIfIndex()][q];
				if (paused && dev->GetQueue()->GetNBytes(q) > 0) {
					int64_t since = shoal_paused_since.emplace(key, now).first->second;
					if (now - since >= after_ns) {
						int64_t &edge = stuck[i][other->GetNode()->GetId()];
						edge = std::max(edge, since);
					}
				} else {
					shoal_paused_since.erase(key);
				}
			}
		}
	}
	for (auto &from : stuck) {
		std::vector<uint32_t> path{from.first};
		if (ShoalFindCycle(stuck, from.first, from.first, path)) {
			int64_t onset = 0;
			for (size_t k = 0; k < path.size(); k++)
				onset = std::max(onset, stuck[path[k]][path[(k + 1) % path.size()]]);
			std::cout << "SHOAL_DEADLOCK onset_ns " << onset << " detected_ns " << now << " cycle";
			for (auto s : path) std::cout << " " << s;
			std::cout << std::endl;
			Simulator::Stop();
			return;
		}
	}
	Simulator::Schedule(MicroSeconds(10), ShoalDeadlockWatch, after_ns);
}

"""
PROGRAM_CHANGES = [
    (
        "#include <time.h>\n",
        "#include <time.h>\n#include <algorithm>\n#include <map>\n#include <sstream>\n"
        "#include <tuple>\n",
    ),
    (
        "\tSimulator::Schedule(Seconds(delay), PrintResults, switchDown, 1, delay);",
        "\t// (report off) "
        "Simulator::Schedule(Seconds(delay), PrintResults, switchDown, 1, delay);",
    ),
    ("int main(int argc, char *argv[])\n", WATCH + "int main(int argc, char *argv[])\n"),
    (
        "\tSimulator::Run();\n",
        "\tSimulator::Run();\n"
        "\tfor (uint32_t i = 0; i < n.GetN(); i++) {\n"
        "\t\tif (!n.Get(i)->GetNodeType()) continue;\n"
        "\t\tfor (auto &kv : DynamicCast<SwitchNode>(n.Get(i))->m_mmu->shoalPeaks)\n"
        '\t\t\tstd::cout << "SHOAL_HEADROOM_PEAK " << (kv.first >> 32) << " "\n'
        '\t\t\t          << (kv.first & 0xffffffffu) << " " << kv.second << std::endl;\n'
        "\t\tPtr<SwitchNode> sw = DynamicCast<SwitchNode>(n.Get(i));\n"
        "\t\tfor (uint32_t j = 1; j < sw->GetNDevices(); j++)\n"
        "\t\t\tif (sw->m_mmu->shoalPausesSent[j])\n"
        '\t\t\t\tstd::cout << "SHOAL_PAUSES " << i << " " << ShoalPeer(sw, j)->GetId() << " "\n'
        "\t\t\t\t          << sw->m_mmu->shoalPausesSent[j] << std::endl;\n"
        "\t}\n",
    ),
    (
        "\tSimulator::Stop(Seconds(simulator_stop_time));\n",
        '\tif (getenv("SHOAL_TX_SAMPLE")) {\n'
        "\t\tuint32_t node, peer;\n"
        "\t\tint64_t every;\n"
        '\t\tstd::istringstream(getenv("SHOAL_TX_SAMPLE")) >> node >> peer >> every;\n'
        "\t\tPtr<SwitchNode> sw = DynamicCast<SwitchNode>(n.Get(node));\n"
        "\t\tfor (uint32_t j = 1; j < sw->GetNDevices(); j++)\n"
        "\t\t\tif (ShoalPeer(sw, j)->GetId() == peer)\n"
        "\t\t\t\tsw->GetDevice(j)->TraceConnectWithoutContext(\n"
        '\t\t\t\t    "QbbDequeue", MakeCallback(&ShoalCountTx));\n'
        "\t\tSimulator::Schedule(NanoSeconds(every), ShoalTxSample, every);\n"
        "\t}\n"
        '\tif (getenv("SHOAL_DEADLOCK_NS"))\n'
        "\t\tSimulator::Schedule(MicroSeconds(10), ShoalDeadlockWatch,"
        ' (int64_t)strtoll(getenv("SHOAL_DEADLOCK_NS"), nullptr, 10));\n'
        "\tSimulator::Stop(Seconds(simulator_stop_time));\n",
    ),
]


def _substitute(text: str, changes, name: str) -> str:
    for old, new in changes:
        if text.count(old) != 1:
            raise UserError(
                f"{name} is not ns3-datacenter 6ddb4a4's: cannot find {old.strip()[:60]!r}", 1
            )
        text = text.replace(old, new)
    return text


def patch_mmu(n3dc: Path) -> bool:
    """Adds DSH (and the headroom episodes' record) to the reference's switch MMU and node;
    returns whether a file changed. The first call keeps each file's original next to it
    (``<file>.shoal-orig``), and every call derives the files from those, so a newer
    version of these changes replaces an older one."""
    files = [n3dc / MODEL / f for f in ("switch-mmu.h", "switch-mmu.cc", "switch-node.cc")]
    originals = [f.with_name(f.name + ".shoal-orig") for f in files]
    if not all(o.is_file() for o in originals):
        if any(MARK in f.read_text() for f in files):
            raise UserError(
                f"{n3dc / MODEL} holds an earlier version of these changes without its "
                "originals: restore switch-mmu.h, switch-mmu.cc and switch-node.cc from "
                "ns3-datacenter 6ddb4a4",
                1,
            )
        for f, o in zip(files, originals, strict=True):
            o.write_text(f.read_text())
    header, source, node = (o.read_text() for o in originals)
    # After the last member, so that programs built before keep every offset they use.
    hook = "\tuint32_t lpfUpdatedOnce;\n"
    header = _substitute(header, [(hook, hook + MMU_DECLS)], "switch-mmu.h")
    source = _substitute(source, [SET_PAUSE], "switch-mmu.cc")
    end = source.rstrip().rfind("}")
    source = source[:end] + MMU_DEFS + "\n}\n"
    anchor = "void SwitchNode::CheckAndSendPfc("
    node = _substitute(
        node, [(anchor, NODE_SYNC + anchor), ADMIT, ENQUEUE, DEQUEUE, RESUME], "switch-node.cc"
    )
    changed = [write_if_changed(f, t) for f, t in zip(files, (header, source, node), strict=True)]
    return any(changed)


def prepare_program(n3dc: Path, build: bool) -> Path:
    """The comparison's program (the burst program with the paper's MMU, the deadlock watch
    and the samplers), built (with ``build``) if it or the MMU changed; its path."""
    changed = patch_mmu(n3dc)
    src = (n3dc / PROGRAMS / "powertcp-evaluation-burst.cc").read_text()
    start, stop = src.find(SWITCH_CONFIG_START), src.find(SWITCH_CONFIG_END)
    if start < 0 or stop < start:
        raise UserError(
            "powertcp-evaluation-burst.cc is not ns3-datacenter 6ddb4a4's: no switch setup", 1
        )
    src = src[:start] + SWITCH_CONFIG + src[stop + len(SWITCH_CONFIG_END) :]
    src = _substitute(src, PROGRAM_CHANGES, "powertcp-evaluation-burst.cc")
    changed |= write_program(n3dc, PROGRAM, src)
    program = n3dc / BUILT.format(PROGRAM)
    if changed or not program.is_file():
        if not build:
            raise UserError(f"build {PROGRAM} first: rerun with --build (minutes)", 1)
        build_targets(n3dc, [PROGRAM])
    return program


# ---- the experiments' scenarios and the reference's inputs --------------------------------


def run_name(experiment: str, params: dict) -> str:
    """What a run of ``experiment`` is called here: its scheme (fig12, fig14), its buffer
    (fig5: "14MB" ... "30MB"), or "sih_dcqcn" (fig6, one run)."""
    if experiment == "fig5":
        return params["switch.buffer_label"]
    return params.get("scheme", "sih_dcqcn")


def scenarios(experiment: str, names, args) -> dict[str, dict]:
    """Each named run's scenario of ``experiment`` as its full mode resolves it (fig14: at
    background load ``args.load``), with ``args.duration`` of arrivals or ``args.flows``
    flows when given, and ``args.stop`` of simulated time (fig12)."""
    from shoal._sweep import expand, load_sweep, resolve_runs
    from shoal.reproduce import find

    spec = load_sweep(find(f"dsh/{experiment}").sweep_spec("full"))
    runs = [r for r in expand(spec) if r.params.get("seed", 1) == 1]
    every = sorted({run_name(experiment, r.params) for r in runs})
    runs = [r for r in runs if run_name(experiment, r.params) in names]
    if experiment == "fig14":
        loads = sorted({r.params["workload.load"] for r in runs})
        runs = [r for r in runs if r.params["workload.load"] == args.load]
        if not runs:
            raise UserError(
                f"--load {args.load}: fig14's background loads are {', '.join(map(str, loads))}", 2
            )
    out = {}
    for r in resolve_runs(spec, runs):
        sc = copy.deepcopy(r.scenario)
        if experiment == "fig12":
            sc["run"]["stop_time"] = args.stop
        for w in [sc["workload"], *sc["workload"].get("extra", [])]:
            if args.duration:
                w["duration"] = args.duration
            if args.flows:
                w["flows"] = args.flows
        out[run_name(experiment, r.params)] = sc
    missing = [s for s in names if s not in out]
    if missing:
        raise UserError(
            f"dsh/{experiment} has no run {missing[0]!r} (it has {', '.join(every)})", 2
        )
    return out


def write_dumbbell(path: Path, topology: dict) -> Path:
    """A dumbbell in the reference's format, numbered as Shoal numbers it: hosts
    0..hosts-1 on S0, the next hosts_right on S1, then S0 and S1."""
    left, right = topology["hosts"], topology["hosts_right"]
    hosts = left + right
    s0, s1 = hosts, hosts + 1
    rate = rate_bps(topology["link_rate"])
    up = rate_bps(topology.get("uplink_rate", topology["link_rate"]))
    delay = f"{round(parse_time_s(topology['link_delay']) * 1e9)}ns"
    links = [f"{h} {s0 if h < left else s1} {rate}.0 {delay} 0" for h in range(hosts)]
    links.append(f"{s0} {s1} {up}.0 {delay} 0")
    path.write_text(f"{hosts + 2} 2 2 {len(links)}\n{s0} {s1}\n" + "\n".join(links) + "\n")
    return path


def write_topology(path: Path, topology: dict) -> Path:
    """The scenario's leaf-spine (or dumbbell) in the reference's format, without its
    failed links."""
    if topology["kind"] == "dumbbell":
        return write_dumbbell(path, topology)
    write_t1_topology(path, topology)
    failed = {frozenset(link) for link in topology.get("failed_links", [])}
    head, ids, *links = path.read_text().splitlines()
    kept = [row for row in links if frozenset(map(int, row.split()[:2])) not in failed]
    nodes, switches, tors, _ = head.split()
    path.write_text(f"{nodes} {switches} {tors} {len(kept)}\n{ids}\n" + "\n".join(kept) + "\n")
    return path


def mmu_env(sc: dict) -> dict[str, str]:
    """The environment the program reads its MMU from (and the switches' ACK priority), from
    the scenario as Shoal resolves it (its preset and defaults laid under it)."""
    from shoal import _core

    resolved = json.loads(_core.resolve(json.dumps(sc))[0])
    sw, fc = resolved["switch"], resolved["switch"]["flow_control"]
    if sw["reserve_per"] != "queue":
        raise UserError(
            f"switch.reserve_per = {sw['reserve_per']!r}: the program reserves per queue", 2
        )
    env = dict([ACK_HIGH_PRIO_ENV]) if resolved["rdma"].get("ack_priority") == 0 else {}
    if sw.get("buffer"):
        env["SHOAL_BUFFER"] = str(parse_size(sw["buffer"]))
    else:
        env["SHOAL_POOL"] = str(parse_size(sw["pool_size"]))
    env |= {
        "SHOAL_HEADROOM": "dsh" if fc["kind"] == "dsh" else "sih",
        "SHOAL_RESERVE": str(parse_size(sw["reserved"])),
        "SHOAL_ALPHA": str(fc["alpha"]),
    }
    if fc.get("stop_at_deadlock"):
        env["SHOAL_DEADLOCK_NS"] = str(round(parse_time_s(fc["deadlock_after"]) * 1e9))
    return env


def read_deadlock(stdout: str) -> dict:
    m = re.search(r"SHOAL_DEADLOCK onset_ns (\d+) detected_ns (\d+) cycle ([\d ]+)", stdout)
    if not m:
        return {"deadlocked": False}
    offset = START_OFFSET_S * 1e9
    return {
        "deadlocked": True,
        "onset_ms": (int(m.group(1)) - offset) / 1e6,
        "detected_ms": (int(m.group(2)) - offset) / 1e6,
        "cycle": [int(s) for s in m.group(3).split()],
    }


def read_peaks(stdout: str) -> list[list[int]]:
    """The program's static-headroom episodes: ``[eta, peak bytes, count]`` rows."""
    rows = re.findall(r"^SHOAL_HEADROOM_PEAK (\d+) (\d+) (\d+)$", stdout, re.MULTILINE)
    return sorted([int(a), int(b), int(c)] for a, b, c in rows)


def read_tx(stdout: str) -> dict:
    """The program's samples of one port's transmitted bytes (``SHOAL_TX_SAMPLE``), in
    ns from the first flow's start."""
    rows = re.findall(r"^SHOAL_TX (\d+) (\d+)$", stdout, re.MULTILINE)
    offset = round(START_OFFSET_S * 1e9)
    return {"tx_ns": [int(t) - offset for t, _ in rows], "tx_bytes": [int(b) for _, b in rows]}


def innocent_rate(times_ns, tx_bytes, burst_ns: float) -> dict:
    """Fig. 13's innocent flow from samples of the bytes sent on its receiver's port: its
    mean rate in the window before the burst, its lowest and its mean in the window
    after, and those over the first (the windows and rates of
    ``shoal.reproduce.dsh.collateral``)."""
    from shoal.reproduce.dsh import AFTER_NS, BEFORE_NS, throughput

    series = throughput(times_ns, tx_bytes)
    at = series["time_ns"] - burst_ns
    before = float(series["gbps"][(at > -BEFORE_NS) & (at <= 0)].mean())
    after = series["gbps"][(at > 0) & (at <= AFTER_NS)]
    low = float(after.min())
    return {
        "f0_before_gbps": before,
        "f0_min_gbps": low,
        "f0_min_ratio": low / before,
        "f0_mean_ratio": float(after.mean()) / before,
    }


def shoal_collateral(run_dir: Path, topology: dict, trace) -> dict:
    """Fig. 13's innocent flow and S1's PAUSEs to S0 in Shoal's run: S1's port to host h
    is h - hosts, and its port to S0 comes after its hosts'."""
    import pandas as pd

    from shoal.reproduce.dsh import innocent_receiver

    burst = trace["start_ns"].max()
    port = innocent_receiver(trace) - topology["hosts"]
    q = pd.read_parquet(run_dir / "queues.parquet")
    at = q[(q["switch"] == 1) & (q["port"] == port)].groupby("time_ns")["tx_bytes"].max()
    pfc = pd.read_parquet(run_dir / "pfc_ports.parquet")
    up = pfc[
        (pfc["node_kind"] == "switch")
        & (pfc["node"] == 1)
        & (pfc["port"] == topology["hosts_right"])
    ]
    out = innocent_rate(at.index.to_numpy(), at.to_numpy(), burst)
    return out | {"s1_pauses_to_s0": int(up["pauses_sent"].sum())}


def utilization(values, weights=None) -> dict:
    """Median and 99th percentile of headroom utilization (peak / eta, each episode once
    or ``weights`` times), and the episodes."""
    import numpy as np

    v = np.asarray(values, dtype=float)
    w = np.ones(len(v)) if weights is None else np.asarray(weights, dtype=float)
    if len(v) == 0:
        return {"episodes": 0, "util_p50": math.nan, "util_p99": math.nan}
    order = np.argsort(v, kind="stable")
    v, cum = v[order], np.cumsum(w[order])

    def q(p):  # the smallest value with at least p of the episodes at or below it
        return float(v[np.searchsorted(cum, p * cum[-1], side="left")])

    return {"episodes": int(cum[-1]), "util_p50": q(0.5), "util_p99": q(0.99)}


def run_reference(
    program: Path,
    n3dc: Path,
    sc: dict,
    trace,
    seed: int,
    out: Path,
    stop_s: float,
    env: dict[str, str] | None = None,
) -> dict:
    """The reference on one scheme and seed until ``stop_s`` of its clock (resumed from
    ``out`` when the inputs match): deadlock, wall and CPU time, lossless drops."""
    out.mkdir(parents=True, exist_ok=True)
    topology = write_topology(out / "n3dc_topology.txt", sc["topology"])
    write_n3dc_flows(out, trace, own_priority=True)
    t = sc["topology"]
    rates = sorted({rate_bps(t["link_rate"]), rate_bps(t.get("uplink_rate", t["link_rate"]))})
    overrides = {
        "TOPOLOGY_FILE": topology,
        **n3dc_files(out),
        "SIMULATOR_STOP_TIME": f"{stop_s:.4f}",
        "ACK_HIGH_PRIO": 1 if sc.get("rdma", {}).get("ack_priority") == 0 else 0,
        **red_maps(sc["switch"].get("marking", {}).get("red"), rates),
    }
    conf = write_n3dc_config(n3dc, out, overrides)
    cmd = [str(program), f"--conf={conf}", *N3DC_FLAGS[sc["rdma"]["cc"]["kind"]]]
    env = mmu_env(sc) | (env or {})
    digest = hashlib.sha256(
        b"".join(p.read_bytes() for p in (conf, out / "n3dc_flows.txt", topology, program))
        + json.dumps([cmd[2:], env, seed]).encode()
    ).hexdigest()
    record = out / "n3dc_run.json"
    saved = json.loads(record.read_text()) if record.is_file() else {}
    if saved.get("inputs") == digest and (out / "n3dc_fct.txt").is_file():
        return saved
    cpu = children_cpu_s()
    log = out / "n3dc_stdout.txt"
    wall, drops = run_n3dc(cmd, log, seed, env)
    stdout = log.read_text()
    saved = {"inputs": digest, **read_deadlock(stdout), "wall_s": wall}
    saved["headroom_peaks"] = read_peaks(stdout)
    saved |= read_tx(stdout)
    saved["pauses"] = {
        f"{a} {b}": int(c)
        for a, b, c in re.findall(r"^SHOAL_PAUSES (\d+) (\d+) (\d+)$", stdout, re.M)
    }
    saved |= {"cpu_s": children_cpu_s() - cpu, "lossless_drops": drops}
    tmp = record.with_suffix(".tmp")
    tmp.write_text(json.dumps(saved, indent=2) + "\n")
    tmp.replace(record)
    log.unlink()
    return saved


def run_shoal(shoal, scenario: Path, out: Path) -> dict:
    """Shoal on ``scenario``: its first deadlock, wall time, lossless drops."""
    wall, _ = run(shoal + ["run", str(scenario), "--out", str(out), "-q"], "shoal run")
    pfc = json.loads((out / "summary.json").read_text())["pfc"]
    result = {"deadlocked": False, "wall_s": wall, "lossless_drops": pfc.get("lossless_drops", 0)}
    if pfc.get("deadlocks"):
        first = pfc["deadlocks"][0]
        result |= {
            "deadlocked": True,
            "onset_ms": first["onset_ns"] / 1e6,
            "cycle": first.get("cycle"),
        }
    return result


def mean_fcts(fct_ns, trace) -> dict:
    """Mean FCT (us) of all flows and, where there are fan-in flows (class 1, fig14), of
    the background (classes 2-7) and the fan-in flows apart; the flows that did not
    finish."""
    import numpy as np

    fct = np.asarray(fct_ns, dtype=float)
    out = {"mean_us": float(np.nanmean(fct) / 1e3), "unfinished": int(np.isnan(fct).sum())}
    fanin = trace["priority"].to_numpy() == 1
    if fanin.any():
        out["background_mean_us"] = float(np.nanmean(fct[~fanin]) / 1e3)
        out["fanin_mean_us"] = float(np.nanmean(fct[fanin]) / 1e3)
    return out


def parse_seeds(text: str) -> list[int]:
    seeds = []
    for part in text.split(","):
        a, _, b = part.partition("-")
        try:
            seeds += list(range(int(a), int(b or a) + 1))
        except ValueError:
            raise UserError(
                f"--seeds {text!r}: expected numbers and ranges such as 1-10,15", 2
            ) from None
    return seeds


def one_run(args, program: Path, n3dc: Path, shoal, sc: dict, seed: int, sdir: Path) -> dict:
    """Both simulators on one scheme and seed: the row of comparison.json."""
    import pandas as pd

    from shoal.reproduce.dsh import innocent_receiver

    sdir.mkdir(parents=True, exist_ok=True)
    sc = copy.deepcopy(sc)
    sc["run"]["seed"] = seed
    scenario = sdir / "shoal.toml"
    scenario.write_text(toml_document(sc))
    trace_csv = sdir / "trace.csv"
    if not trace_csv.is_file() or trace_csv.stat().st_mtime < scenario.stat().st_mtime:
        run(shoal + ["trace", str(scenario), "--out", str(trace_csv)], "shoal trace")
    trace = sorted_trace(pd.read_csv(trace_csv))
    if args.experiment in ("fig12", "fig13"):
        stop = START_OFFSET_S + parse_time_s(sc["run"]["stop_time"])
    else:
        stop = START_OFFSET_S + trace["start_ns"].max() / 1e9 + args.tail
    sample = {}
    if args.experiment == "fig13":
        t = sc["topology"]
        s1, f0 = t["hosts"] + t["hosts_right"] + 1, innocent_receiver(trace)
        every = round(parse_time_s(sc["run"]["sample_interval"]) * 1e9)
        sample = {"SHOAL_TX_SAMPLE": f"{s1} {f0} {every}"}
    ref = run_reference(program, n3dc, sc, trace, seed, sdir, stop, sample)
    mine_path = sdir / "shoal_run.json"
    mine = json.loads(mine_path.read_text()) if mine_path.is_file() else {}
    if mine.get("scenario") != scenario.read_text():
        run_dir = sdir / "shoal"
        mine = run_shoal(shoal, scenario, run_dir) | {"scenario": scenario.read_text()}
        if args.experiment in ("fig5", "fig14"):
            flows = pd.read_parquet(run_dir / "flows.parquet").set_index("id")
            mine |= mean_fcts(flows.loc[trace["id"], "fct_ns"].to_numpy(dtype=float), trace)
        if args.experiment == "fig6":
            episodes = pd.read_parquet(run_dir / "headroom.parquet")
            mine |= utilization(episodes["peak_bytes"] / episodes["headroom_bytes"])
        if args.experiment == "fig13":
            mine |= shoal_collateral(run_dir, sc["topology"], trace)
        mine_path.write_text(json.dumps(mine, indent=2) + "\n")
    bulky = ("inputs", "headroom_peaks", "tx_ns", "tx_bytes", "pauses")
    reference = {k: v for k, v in ref.items() if k not in bulky}
    if args.experiment in ("fig5", "fig14"):
        reference |= mean_fcts(read_n3dc_fct_by_sport(sdir / "n3dc_fct.txt", trace), trace)
    if args.experiment == "fig13":
        burst = trace["start_ns"].max()
        reference |= innocent_rate(ref["tx_ns"], ref["tx_bytes"], burst)
        s0, s1 = (sc["topology"]["hosts"] + sc["topology"]["hosts_right"] + i for i in (0, 1))
        reference["s1_pauses_to_s0"] = ref["pauses"].get(f"{s1} {s0}", 0)
    if args.experiment == "fig6":
        peaks = ref["headroom_peaks"]
        reference |= utilization([p / eta for eta, p, _ in peaks], [c for *_, c in peaks])
    row = {"seed": seed, "flows": len(trace), "n3dc": reference}
    row["shoal"] = {k: v for k, v in mine.items() if k != "scenario"}
    return row


def summarize(experiment: str, rows: dict[str, list[dict]]) -> dict:
    """Per run name, in each simulator, over the seeds: fig12, the fraction of runs that
    deadlocked; fig14, the mean FCTs and DSH's over SIH's (same CC); fig5, the mean FCT
    and the smallest buffer's over the largest's; fig6, the utilization's median and
    99th percentile."""
    metrics = {
        "fig14": ("background_mean_us", "fanin_mean_us"),
        "fig5": ("mean_us",),
        "fig6": ("util_p50", "util_p99", "episodes"),
        "fig13": ("f0_min_ratio", "f0_mean_ratio", "s1_pauses_to_s0"),
    }.get(experiment, ())
    out = {}
    for s, runs in rows.items():
        entry: dict = {"runs": runs}
        for sim in ("n3dc", "shoal"):
            if experiment == "fig12":
                entry[f"{sim}_deadlock_fraction"] = sum(r[sim]["deadlocked"] for r in runs) / len(
                    runs
                )
            for m in metrics:
                entry[f"{sim}_{m}"] = sum(r[sim][m] for r in runs) / len(runs)
        out[s] = entry
    for sim in ("n3dc", "shoal"):
        if experiment == "fig14":
            for s, entry in out.items():
                twin = out.get("sih_" + s.removeprefix("dsh_"))
                if s.startswith("dsh_") and twin:
                    for m in ("background", "fanin"):
                        key = f"{sim}_{m}_mean_us"
                        entry[f"{sim}_{m}_vs_sih"] = entry[key] / twin[key]
        if experiment == "fig5" and len(out) > 1:
            by_size = sorted(out, key=parse_size)
            small, large = out[by_size[0]], out[by_size[-1]]
            small[f"{sim}_vs_largest"] = small[f"{sim}_mean_us"] / large[f"{sim}_mean_us"]
    return out


def run_names(args) -> list[str]:
    """The runs to compare: fig12's and fig14's schemes, fig5's buffers, fig6's one run."""
    if args.experiment == "fig6":
        return ["sih_dcqcn"]
    if args.experiment == "fig5":
        return [b for b in args.buffers.split(",") if b]
    schemes = [s for s in args.schemes.split(",") if s]
    bad = [s for s in schemes if s not in SCHEMES]
    if bad:
        raise UserError(f"--schemes: {bad[0]!r} is not one of {', '.join(SCHEMES)}", 2)
    return schemes


def compare(args) -> int:
    n3dc = Path(args.n3dc).resolve()
    names = run_names(args)
    seeds = parse_seeds(args.seeds)
    scs = scenarios(args.experiment, names, args)
    program = prepare_program(n3dc, args.build)
    out = Path(args.out or HERE / "results" / f"n3dc_dsh_{args.experiment}")
    out.mkdir(parents=True, exist_ok=True)
    shoal = shoal_cmd()
    rows: dict[str, list[dict]] = {}
    for name in names:
        rows[name] = []
        for seed in seeds:
            row = one_run(args, program, n3dc, shoal, scs[name], seed, out / name / f"seed{seed}")
            rows[name].append(row)
            print(
                f"{name} seed {seed}: ns3-datacenter {_brief(row['n3dc'])}, "
                f"Shoal {_brief(row['shoal'])}",
                flush=True,
            )
    settings = ("seeds", "stop", "load", "duration", "flows", "tail")
    result = {
        "experiment": f"dsh/{args.experiment}",
        **{k: getattr(args, k) for k in settings},
        "runs": summarize(args.experiment, rows),
    }
    tmp = out / "comparison.json.tmp"
    tmp.write_text(json.dumps(result, indent=2) + "\n")
    tmp.replace(out / "comparison.json")
    print()
    for name, r in result["runs"].items():
        print(f"{name:<14} " + _summary_line(args.experiment, r))
    print(f"\nwrote {out / 'comparison.json'}")
    return 0


def _summary_line(experiment: str, r: dict) -> str:
    def both(fmt: str, *keys: str) -> str:
        n, m = ("/".join(fmt.format(r[f"{sim}_{k}"]) for k in keys) for sim in ("n3dc", "shoal"))
        return f"ns3-datacenter {n}, Shoal {m}"

    if experiment == "fig12":
        return f"runs deadlocked: {both('{:.0%}', 'deadlock_fraction')} ({len(r['runs'])} seeds)"
    if experiment == "fig6":
        return f"headroom utilization p50/p99: {both('{:.2%}', 'util_p50', 'util_p99')}"
    if experiment == "fig13":
        return (
            "F0's lowest / mean rate in 500 us after the burst, over its rate before: "
            f"{both('{:.2f}', 'f0_min_ratio', 'f0_mean_ratio')}; "
            f"S1's PAUSEs to S0: {both('{:.0f}', 's1_pauses_to_s0')}"
        )
    if experiment == "fig5":
        line = f"mean FCT (us): {both('{:.1f}', 'mean_us')}"
        if "n3dc_vs_largest" in r:
            line += f"; over the largest buffer's: {both('{:.3f}', 'vs_largest')}"
        return line
    line = (
        f"mean FCT background/fan-in (us): {both('{:.1f}', 'background_mean_us', 'fanin_mean_us')}"
    )
    if "n3dc_background_vs_sih" in r:
        line += f"; DSH/SIH: {both('{:.3f}', 'background_vs_sih', 'fanin_vs_sih')}"
    return line


def _brief(r: dict) -> str:
    if "background_mean_us" in r:
        text = f"background {r['background_mean_us']:.1f} us, fan-in {r['fanin_mean_us']:.1f} us"
    elif "f0_min_ratio" in r:
        text = f"F0 down to {r['f0_min_ratio']:.0%}, {r['s1_pauses_to_s0']} PAUSEs S1 -> S0"
    elif "util_p50" in r:
        text = f"utilization p50 {r['util_p50']:.2%}, p99 {r['util_p99']:.2%}"
    elif "mean_us" in r:
        text = f"mean FCT {r['mean_us']:.1f} us"
    else:
        text = f"deadlock at {r['onset_ms']:.2f} ms" if r["deadlocked"] else "no deadlock"
    return f"{text} ({r['wall_s']:.0f} s)"


def main(argv=None) -> int:
    p = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--n3dc", required=True, help="ns3-datacenter's simulator/ns-3.39, configured")
    p.add_argument(
        "--experiment", choices=("fig12", "fig14", "fig5", "fig6", "fig13"), default="fig12"
    )
    p.add_argument(
        "--build", action="store_true", help="add DSH to the reference and build the program"
    )
    p.add_argument("--schemes", default="sih_dcqcn,dsh_dcqcn", help=f"of {', '.join(SCHEMES)}")
    p.add_argument("--seeds", default="1-10", help="seeds, e.g. 1-10 or 1,4,7 (default 1-10)")
    p.add_argument(
        "--stop", default="100ms", help="fig12: simulated time per run (default 100ms, the paper's)"
    )
    p.add_argument(
        "--load", type=float, default=0.6, help="fig14: the background load (default 0.6)"
    )
    p.add_argument("--buffers", default="14MB,30MB", help="fig5: the buffers (default 14MB,30MB)")
    p.add_argument("--duration", help="fig12, fig14: arrivals for this long (default: their own)")
    p.add_argument("--flows", type=int, help="fig5, fig6: this many flows (default: their own)")
    p.add_argument(
        "--tail",
        type=float,
        default=0.05,
        help="fig5, fig6, fig14: seconds the reference runs after the last arrival (default 0.05)",
    )
    p.add_argument("--out")
    return run_guarded(compare, p.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
