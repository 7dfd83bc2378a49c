#!/usr/bin/env python3
"""Tables of the scaling series from the log.txt of one or more run directories.
usage: summarize.py runs [runs2 ...]
Per round: best htsim ns/pkt of its reps, braid's (best of its --repeat) with the binary's sha.
Then overall: best over all rounds (braid binaries may differ between rounds)."""
import os, re, sys

def kv(line):
    return dict(re.findall(r'(\w+)=(\[[^\]]*\]|\S+)', line))

dirs = sys.argv[1:] or ['runs']
overall_h, overall_b = {}, {}
for d in dirs:
    h, b = {}, {}
    for line in open(os.path.join(d, 'log.txt')):
        m = kv(line)
        if 'ns_per_pkt' not in m: continue
        n = int(m['flows'])
        row = (float(m['ns_per_pkt']), float(m['peak_rss_mb']), int(m['delivered_pkts']),
               m.get('busy_cores', '?'), m.get('load_before', '?'), m.get('sha', ''))
        (h if ' htsim ' in line else b).setdefault(n, []).append(row)
    print('\n## %s\n' % d)
    print('| N | htsim ns/pkt best (all reps; busy cores) | htsim peak MB | htsim window pkts | Braid ack1 ns/pkt (busy cores) | Braid peak MB | Braid window pkts | braid sha |')
    print('|---|---|---|---|---|---|---|---|')
    for n in sorted(set(h) | set(b)):
        hs, bs = h.get(n, []), b.get(n, [])
        overall_h.setdefault(n, []).extend(hs); overall_b.setdefault(n, []).extend(bs)
        hc = ('**%.0f** (%s)' % (min(hs)[0], ', '.join('%.0f; %s' % (r[0], r[3]) for r in hs)), '%.1f' % max(r[1] for r in hs), str(min(hs)[2])) if hs else ('-',) * 3
        bc = ('%.0f (%s)' % (bs[-1][0], bs[-1][3]), '%.1f' % bs[-1][1], str(bs[-1][2]), bs[-1][5]) if bs else ('-',) * 4
        print('| %d | %s | %s | %s | %s | %s | %s | %s |' % ((n,) + hc + bc))
print('\n## best over %s\n' % ' '.join(dirs))
print('| N | htsim mirror ns/pkt | htsim peak MB | Braid ack1 ns/pkt | Braid peak MB |')
print('|---|---|---|---|---|')
for n in sorted(set(overall_h) | set(overall_b)):
    hs, bs = overall_h.get(n, []), overall_b.get(n, [])
    print('| %d | %s | %s | %s | %s |' % (n, '%.0f' % min(hs)[0] if hs else '-', '%.1f' % max(r[1] for r in hs) if hs else '-',
                                         '%.0f' % min(bs)[0] if bs else '-', '%.1f' % max(r[1] for r in bs) if bs else '-'))
