#!/usr/bin/env python3
"""Checks the shape docs/design.md gives the code, so that it stays that way:

- no file over 20 KB in src/ or python/sluice/ (tests aside);
- no function over 80 lines (C++ and CUDA bodies, Python defs);
- includes point down the floors: core and gpu, io, codec, kernels, ops, pipeline (a file may
  include its own floor or one below; public headers include only public headers);
- no cycle between kernel folders, or between op files;
- no run of six or more identical lines between the CPU and the GPU executor.

Prints what breaks a rule and exits 1, or prints a summary and exits 0.
    python3 scripts/check_structure.py [ROOT]
"""
from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

MAX_FILE_BYTES = 20 * 1024
MAX_FUNCTION_LINES = 80
FLOORS = {"core": 0, "gpu": 0, "io": 1, "codec": 2, "video": 2, "kernels": 3, "ops": 4, "pipeline": 5}
CPP = (".h", ".cc", ".cu", ".cuh")
INCLUDE = re.compile(r'^\s*#include\s+"([^"]+)"', re.M)


def is_test(path: Path) -> bool:
    return path.stem.endswith("_test") or "tests" in path.parts


def strip_cpp(text: str) -> str:
    """Comments, string and character literals blanked out (newlines kept)."""
    pattern = re.compile(r'//[^\n]*|/\*.*?\*/|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'', re.S)
    return pattern.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)


def cpp_functions(text: str):
    """(name, first line, last line) of each function body at namespace or class scope."""
    code = strip_cpp(text)
    scopes, out, line = [], [], 1
    start_of_statement = 0
    for i, ch in enumerate(code):
        if ch == "\n":
            line += 1
        elif ch in ";}" and (not scopes or scopes[-1][0] != "function"):
            start_of_statement = i + 1
        if ch == "{":
            head = code[start_of_statement:i]
            in_function = any(kind == "function" for kind, _, _ in scopes)
            if in_function:
                kind = "block"
            elif re.search(r"\b(namespace|class|struct|union|enum)\b[^()]*$", head):
                kind = "scope"
            elif re.search(r"\)\s*(const|override|final|noexcept|mutable|->[^{;]*)*\s*(:[^{;]*)?$", head, re.S):
                kind = "function"
            else:
                kind = "block"
            first = line - head.lstrip().count("\n") if kind == "function" else line
            name = re.findall(r"([~\w:]+)\s*\(", head)
            scopes.append((kind, first, name[0] if name else "?"))
            if kind != "block":
                start_of_statement = i + 1
        elif ch == "}" and scopes:
            kind, first, name = scopes.pop()
            if kind == "function":
                out.append((name, first, line))
            if not scopes or scopes[-1][0] != "function":
                start_of_statement = i + 1
    return out


def check(root: Path) -> list[str]:
    problems = []
    files = sorted(p for base in ("src", "python/sluice", "include", "python/src") for p in (root / base).rglob("*")
                   if p.is_file() and p.suffix in CPP + (".py",))
    for p in files:
        rel = p.relative_to(root)
        text = p.read_text(encoding="utf-8")
        if not is_test(p) and rel.parts[0] in ("src", "python") and p.stat().st_size > MAX_FILE_BYTES:
            problems.append(f"{rel}: {p.stat().st_size} bytes, over {MAX_FILE_BYTES}")
        if p.suffix == ".py":
            for node in ast.walk(ast.parse(text)):
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    n = node.end_lineno - node.lineno + 1
                    if n > MAX_FUNCTION_LINES:
                        problems.append(f"{rel}:{node.lineno}: {node.name} is {n} lines, over {MAX_FUNCTION_LINES}")
            continue
        for name, first, last in cpp_functions(text):
            if last - first + 1 > MAX_FUNCTION_LINES:
                problems.append(f"{rel}:{first}: {name} is {last - first + 1} lines, over {MAX_FUNCTION_LINES}")
        problems += include_problems(rel, text)
    problems += cycle_problems(root)
    problems += executor_repeats(root)
    return problems


def include_problems(rel: Path, text: str) -> list[str]:
    out = []
    if rel.parts[0] == "include":
        for inc in INCLUDE.findall(text):
            if not inc.startswith("sluice/"):
                out.append(f"{rel}: a public header includes {inc}")
        return out
    if rel.parts[0] != "src":
        return out
    floor = FLOORS[rel.parts[1]]
    for inc in INCLUDE.findall(text):
        top = inc.split("/")[0]
        if top in FLOORS and FLOORS[top] > floor:
            out.append(f"{rel}: includes {inc}, a floor above {rel.parts[1]}/")
    return out


def cycle_problems(root: Path) -> list[str]:
    """Cycles among kernel folders (kernels/<op>/) and among op files (ops/<file>)."""
    out = []
    def kernel_folder(inc: str):
        return inc.split("/")[1] if inc.startswith("kernels/") and inc.count("/") > 1 else None

    def op_file(inc: str):
        return Path(inc).stem if inc.startswith("ops/") else None

    for folder, key in (("src/kernels", kernel_folder), ("src/ops", op_file)):
        edges: dict[str, set[str]] = {}
        for p in (root / folder).rglob("*"):
            if p.suffix not in CPP or is_test(p):
                continue
            node = p.relative_to(root / folder).parts[0] if folder.endswith("kernels") else p.stem
            for inc in INCLUDE.findall(p.read_text(encoding="utf-8")):
                target = key(inc)
                if target and target != node:
                    edges.setdefault(node, set()).add(target)
        out += [f"{folder}: include cycle {' -> '.join(c)}" for c in find_cycles(edges)]
    return out


def find_cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    cycles, state = [], {}

    def visit(node: str, path: list[str]) -> None:
        state[node] = 1
        for nxt in sorted(edges.get(node, ())):
            if state.get(nxt) == 1:
                cycles.append(path[path.index(nxt):] + [nxt])
            elif nxt not in state:
                visit(nxt, path + [nxt])
        state[node] = 2

    for node in sorted(edges):
        if node not in state:
            visit(node, [node])
    return cycles


def executor_repeats(root: Path, run: int = 6) -> list[str]:
    """Runs of `run` or more identical (whitespace-folded, non-trivial) lines between the two
    executors' folders."""
    def lines(folder: str) -> list[tuple[str, str]]:
        out = []
        for p in sorted((root / folder).glob("*")):
            if p.suffix in CPP and not is_test(p):
                for n, raw in enumerate(strip_cpp(p.read_text(encoding="utf-8")).splitlines(), 1):
                    s = " ".join(raw.split())
                    if len(s) > 3 and not s.startswith("#include"):
                        out.append((s, f"{p.relative_to(root)}:{n}"))
        return out

    cpu, gpu = lines("src/pipeline/cpu"), lines("src/pipeline/gpu")
    at = {}
    for k in range(len(gpu) - run + 1):
        at.setdefault(tuple(s for s, _ in gpu[k:k + run]), gpu[k][1])
    return [f"{cpu[k][1]}: {run} lines repeated at {at[key]}"
            for k in range(len(cpu) - run + 1) if (key := tuple(s for s, _ in cpu[k:k + run])) in at]


def main() -> int:
    root = Path(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).resolve().parent.parent)
    problems = check(root)
    for p in problems:
        print(p)
    if problems:
        return 1
    print("structure: ok (files <= 20 KB, functions <= 80 lines, includes point down, no cycles, "
          "no repeats between the executors)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
