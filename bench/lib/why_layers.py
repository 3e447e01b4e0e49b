"""Applies sockbench's layer table (parsed from src/cpu/why/layers.rs, never copied)
to the call chains of `perf script -F ip,sym` output, the way sockbench does:
leaf first, the first frame the table names decides; a chain holding perf's own
functions is left out. Prints "layer samples" lines, then "left-out N".

usage: why_layers.py LAYERS_RS MOD_RS SCRIPT [--chains]
User-space samples: TLS when the leaf's DSO (perf script -F ip,sym,dso) is libssl or
libcrypto, else user."""
import re
import sys
from collections import Counter

layers_rs, mod_rs, script = sys.argv[1:4]
src = open(layers_rs).read()
table = []
for pattern, layer, perf in re.findall(
        r'\("([^"]+)",\s*Class::(?:In\(Layer::(\w+)\)|(Perf))\)', src):
    table.append((pattern, "PERF" if perf else layer))
names = dict(re.findall(r'(\w+) = "([^"]+)"', open(mod_rs).read().split("pub enum Layer")[1]))


def class_of(name):
    name = name.split(".")[0]
    for pattern, cls in table:
        if pattern.endswith("*"):
            if name.startswith(pattern[:-1]):
                return cls
        elif name == pattern:
            return cls
    return None


def chains(path):
    cur = []
    for line in open(path, errors="replace"):
        line = line.strip()
        if not line:
            if cur:
                yield cur
            cur = []
            continue
        parts = line.split()
        addr = int(parts[0], 16)
        sym = parts[1] if len(parts) > 1 else "[unknown]"
        dso = parts[-1] if len(parts) > 2 else ""
        cur.append((addr, sym, dso))
    if cur:
        yield cur


counts, left_out, unnamed = Counter(), 0, Counter()
for chain in chains(script):
    leaf_addr, leaf_sym, leaf_dso = chain[0]
    if leaf_addr < 0xffff800000000000:
        tls = "libssl" in leaf_dso or "libcrypto" in leaf_dso
        counts[names["Tls" if tls else "User"]] += 1
        continue
    kernel = [sym for addr, sym, _ in chain if addr >= 0xffff800000000000]
    classes = [c for c in map(class_of, kernel) if c]
    if "PERF" in classes:
        left_out += 1
        continue
    layer = classes[0] if classes else "OtherKernel"
    if layer == "OtherKernel":
        unnamed[" < ".join(kernel[:5])] += 1
    counts[names[layer]] += 1
for layer, n in sorted(counts.items()):
    print(f"{layer.replace(' ', '_')} {n}")
print(f"left-out {left_out}")
if "--chains" in sys.argv:
    for chain, n in unnamed.most_common(25):
        print(f"# {n} {chain}", file=sys.stderr)
