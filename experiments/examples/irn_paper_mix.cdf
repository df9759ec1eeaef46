# A flow-size mix built from what the IRN paper (Mittal et al., SIGCOMM 2018, section 4.1)
# says of its own: sizes from 32 B to 3 MB, half of the flows single-packet (32 B to 1 KB),
# 15% of them 200 KB to 3 MB. Between those anchors the sizes are spread evenly in log
# size (points at 100 B, 300 B, 3 KB ...): our assumption, not the paper's.
# <flow size in bytes> <cumulative percent>
32 0
100 16.55
300 32.51
1000 50
3000 57.26
10000 65.21
30000 72.47
100000 80.42
200000 85
500000 90.08
1000000 93.91
2000000 97.75
3000000 100
