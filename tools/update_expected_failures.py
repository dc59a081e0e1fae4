#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Rewrites tests/conformance/expected_failures.txt from what ember_conformance reports now.

    build/gcc/tests/ember_conformance --emit-expected | python3 tools/update_expected_failures.py

Each failing case gets one line, `category/case  reason`. The reason is a short category that
says why the case is out of reach (a string tensor, a random op, a training op, an op ember does
not implement yet, ...), followed by the runner's own message for that case, so the list says
honestly what happens. Review the diff before committing it: a case that used to pass and now
fails shows up here as a new line, and that is a regression to fix, not a line to add.
"""
import re
import sys
from pathlib import Path

OUT = Path(__file__).resolve().parent.parent / "tests" / "conformance" / "expected_failures.txt"

RANDOM_OPS = {"Bernoulli", "RandomNormal", "RandomNormalLike", "RandomUniform", "RandomUniformLike", "Multinomial"}
STRING_OPS = {"StringNormalizer", "RegexFullMatch", "StringConcat", "StringSplit", "LabelEncoder"}
SEQUENCE_OPS = {"SequenceAt", "SequenceConstruct", "SequenceEmpty", "SequenceErase", "SequenceInsert", "SequenceLength",
                "SequenceMap", "SplitToSequence", "ConcatFromSequence", "Optional", "OptionalGetElement", "OptionalHasElement"}

HEADER = """\
# Cases of ONNX's backend test data (Debian's libonnx-testdata 1.12: node, pytorch-converted,
# pytorch-operator, simple) that ember is expected to fail, one line each: `category/case  reason`.
# ember_conformance fails on any case that fails without a line here, on any case here that
# passes (so the list stays true) and on any crash or timeout. Regenerate with
#     build/gcc/tests/ember_conformance --emit-expected | python3 tools/update_expected_failures.py
# and review the diff: only cases that never passed belong here.
"""


def reason_for(message: str) -> str:
    op = re.search(r"op '([A-Za-z0-9_]+)'(?: of domain '([^']+)')? is not supported", message)
    if "STRING" in message or "string tensors" in message:
        return "string tensors: ember has no string dtype"
    if "is not a tensor (sequence, map, optional" in message:
        return "sequence/optional/map values: ember's graphs hold tensors only"
    if op:
        name, domain = op.group(1), op.group(2) or ""
        if "training" in domain:
            return f"training op {name} ({domain}): inference engine"
        if name in RANDOM_OPS:
            return f"random op {name}: its output cannot match a stored reference"
        if name in STRING_OPS:
            return f"string op {name}: ember has no string dtype"
        if name in SEQUENCE_OPS:
            return f"sequence op {name}: ember's graphs hold tensors only"
        return f"op {name} not implemented yet"
    if "training_mode" in message or "is_test = 0" in message:
        return "training mode: inference engine"
    if "input 'like' is declared" in message:
        return "test data: input 'like' is stored with another shape than the model declares, which ember refuses"
    if "(bfloat16)" in message and "expected" in message:
        return ("test data: ONNX 1.12 made its float->bfloat16 reference by truncation; ember rounds to nearest even, "
                "as ONNX Runtime and later ONNX test data do")
    if "must be known at compile time" in message:
        return "data-dependent shape: static plan (" + message.split(": ", 1)[-1] + ")"
    return "not supported yet: " + message


def main() -> int:
    lines = []
    for raw in sys.stdin:
        if not raw.startswith("EXPECT "):
            continue
        name, _, message = raw[len("EXPECT "):].rstrip("\n").partition("  ")
        reason = reason_for(message)
        detail = re.sub(r"\s+", " ", message).strip()
        lines.append(f"{name}  {reason}" + ("" if detail in reason else f" [{detail[:160]}]"))
    OUT.write_text(HEADER + "\n".join(sorted(lines)) + "\n")
    print(f"wrote {len(lines)} cases to {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
