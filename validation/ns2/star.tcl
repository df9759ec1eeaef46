# ns-2 (Debian's ns2 2.35) side of validation/compare_ns2.py: replays a Shoal flow trace
# on a star of hosts around one switch with Agent/TCP/FullTcp/Sack, the sender the BCC,
# PIAS and LossPass papers ran. No ECN (stock ns-2.35 has no DCTCP): the comparison is
# of loss recovery, against Shoal with cc = "newreno", sack = true.
#
#   ns star.tcl trace.csv out.csv hosts rate_gbps delay_us switch_buffer_bytes \
#      nic_buffer_bytes mss header init_cwnd rto_min_s stop_s
#
# out.csv: id,fct_ns,timeouts (fct: last byte acknowledged at the sender - start, as
# the authors' traffic generator measures it); out.csv.drops: switch and NIC drops.

if {$argc != 12} {
    puts stderr "usage: ns star.tcl trace out hosts rate_gbps delay_us switch_buffer nic_buffer mss header init_cwnd rto_min stop"
    exit 2
}
lassign $argv trace_file out_file hosts rate delay_us sw_buf nic_buf mss header init_cwnd rto_min stop

set ns [new Simulator]
set pkt [expr {$mss + $header}]

Agent/TCP set ecn_ 0
Agent/TCP set windowInit_ $init_cwnd
Agent/TCP set window_ 100000
Agent/TCP set packetSize_ $mss
Agent/TCP set tcpip_base_hdr_size_ $header
Agent/TCP set tcpTick_ 0.000001
Agent/TCP set minrto_ $rto_min
Agent/TCP set rtxcur_init_ $rto_min
Agent/TCP set maxrto_ 64
Agent/TCP set numdupacks_ 3
Agent/TCP set windowOption_ 0
Agent/TCP/FullTcp set segsize_ $mss
Agent/TCP/FullTcp set nodelay_ true
Agent/TCP/FullTcp set segsperack_ 1
Agent/TCP/FullTcp set interval_ 0.000006

# Byte-limited tail-drop queues: limit_ packets of mean_pktsize_ bytes.
Queue/DropTail set queue_in_bytes_ true
Queue/DropTail set mean_pktsize_ $pkt

set sw [$ns node]
set null [open /dev/null w]
for {set i 0} {$i < $hosts} {incr i} {
    set h($i) [$ns node]
    $ns duplex-link $h($i) $sw ${rate}Gb [expr {$delay_us * 1e-6}] DropTail
    $ns queue-limit $sw $h($i) [expr {max(1, $sw_buf / $pkt)}]
    $ns queue-limit $h($i) $sw [expr {max(1, $nic_buf / $pkt)}]
    set qm_sw($i) [$ns monitor-queue $sw $h($i) $null 1.0]
    set qm_nic($i) [$ns monitor-queue $h($i) $sw $null 1.0]
}

set out [open $out_file w]
puts $out "id,fct_ns,timeouts"
set flows 0
set finished 0

Agent/TCP/FullTcp instproc done_data {} {
    global ns out finished flows start_of id_of
    set fid $id_of($self)
    puts $out "$fid,[expr {([$ns now] - $start_of($self)) * 1e9}],[$self set nrexmit_]"
    incr finished
    if {$finished == $flows} { finish }
}

proc start_flow {fid src dst bytes} {
    global ns h start_of id_of
    set s [new Agent/TCP/FullTcp/Sack]
    set r [new Agent/TCP/FullTcp/Sack]
    $ns attach-agent $h($src) $s
    $ns attach-agent $h($dst) $r
    $ns connect $s $r
    $r listen
    set start_of($s) [$ns now]
    set id_of($s) $fid
    $s set signal_on_empty_ TRUE
    $s advance-bytes $bytes
}

proc finish {} {
    global ns out out_file hosts qm_sw qm_nic finished flows
    close $out
    set sw 0
    set nic 0
    for {set i 0} {$i < $hosts} {incr i} {
        incr sw [$qm_sw($i) set pdrops_]
        incr nic [$qm_nic($i) set pdrops_]
    }
    set d [open $out_file.drops w]
    puts $d "{\"switch_drops\": $sw, \"nic_drops\": $nic, \"flows\": $flows, \"finished\": $finished}"
    close $d
    exit 0
}

set f [open $trace_file r]
gets $f header_line
while {[gets $f line] >= 0} {
    lassign [split $line ,] fid src dst bytes start_ns
    $ns at [expr {$start_ns * 1e-9}] "start_flow $fid $src $dst $bytes"
    incr flows
}
close $f
$ns at $stop "finish"
$ns run
