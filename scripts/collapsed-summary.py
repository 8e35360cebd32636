#!/usr/bin/env python3
"""Summarizes async-profiler collapsed stacks (`threads` option: the thread is the first frame):
samples by thread, hottest frames (self), and inclusive time of gospan/OpenTelemetry/grpc/netty/
jnr/libbpf/kernel frames, per span when the span count is given.
Usage: collapsed-summary.py FILE [spans] [interval_us] [top]"""
import collections, re, sys

path = sys.argv[1]
spans = int(sys.argv[2]) if len(sys.argv) > 2 else 0
interval_us = float(sys.argv[3]) if len(sys.argv) > 3 else 1000.0
top = int(sys.argv[4]) if len(sys.argv) > 4 else 30
threads, self_, incl, thread_incl = collections.Counter(), collections.Counter(), collections.Counter(), collections.Counter()
total = 0
for line in open(path):
    stack, _, n = line.rstrip('\n').rpartition(' ')
    n = int(n)
    frames = stack.split(';')
    thread = re.sub(r'[0-9]+', '#', frames[0].strip('[]'))
    frames = frames[1:]
    total += n
    threads[thread] += n
    if frames:
        self_[frames[-1]] += n
    seen = set()
    for f in frames:
        if f not in seen:
            seen.add(f)
            incl[f] += n
            thread_incl[(thread, f)] += n

def us(n):
    return n * interval_us / spans if spans else n * interval_us / 1000.0

unit = 'CPU us per span' if spans else 'CPU ms'
print(f'samples: {total} ({us(total):.2f} {unit}, {interval_us:.0f} us interval)')
print(f'\nby thread ({unit}):')
for t, n in threads.most_common(top):
    print(f'  {100.0*n/total:5.1f} %  {us(n):8.2f}  {t}')
print(f'\nhottest frames, self ({unit}):')
for f, n in self_.most_common(top):
    print(f'  {100.0*n/total:5.1f} %  {us(n):8.2f}  {f}')
interesting = re.compile(r'io/gospan|io\.gospan|opentelemetry|io/grpc|io\.grpc|netty|jnr|ring_buffer|epoll|bpf|__x64_sys|Compile|GC|VMThread|do_syscall')
print(f'\ninclusive, selected frames ({unit}):')
for f, n in [x for x in incl.most_common() if interesting.search(x[0])][:top * 2]:
    print(f'  {100.0*n/total:5.1f} %  {us(n):8.2f}  {f}')
