"""The code keeps the shape docs/design.md gives it (scripts/check_structure.py): small files,
short functions, includes that point down the floors, no cycles, no repeats between executors."""
from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
spec = importlib.util.spec_from_file_location("check_structure", ROOT / "scripts" / "check_structure.py")
check_structure = importlib.util.module_from_spec(spec)
spec.loader.exec_module(check_structure)


def test_the_tree_keeps_its_shape():
    assert check_structure.check(ROOT) == []


def test_the_checker_finds_what_breaks_a_rule(tmp_path):
    def write(rel, text):
        p = tmp_path / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)

    body = "\n".join(f"  x += {i};" for i in range(85))
    write("src/kernels/a/a.cc", '#include "kernels/b/b.h"\n#include "pipeline/plan.h"\n'
                                f"namespace s {{\nint Long(int x) {{\n{body}\n  return x;\n}}\n}}\n")
    write("src/kernels/b/b.h", '#include "kernels/a/a.h"\n')
    write("src/pipeline/big.cc", "// " + "x" * 21000 + "\n")
    write("python/sluice/m.py", "def f():\n" + "\n".join(f"    y = {i}" for i in range(85)) + "\n")
    run = "\n".join(f"  int v{i} = Compute({i}, other, more);" for i in range(7))
    write("src/pipeline/cpu/e.cc", f"void A() {{\n{run}\n}}\n")
    write("src/pipeline/gpu/e.cc", f"void B() {{\n{run}\n}}\n")
    problems = "\n".join(check_structure.check(tmp_path))
    assert "src/kernels/a/a.cc:4: Long is 88 lines, over 80" in problems
    assert "python/sluice/m.py:1: f is 86 lines, over 80" in problems
    assert "src/kernels/a/a.cc: includes pipeline/plan.h, a floor above kernels/" in problems
    assert "src/kernels: include cycle a -> b -> a" in problems
    assert "src/pipeline/big.cc: 21004 bytes, over 20480" in problems
    assert "lines repeated at src/pipeline/gpu/e.cc:2" in problems
