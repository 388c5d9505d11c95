"""The gate as JUnit XML (`--junit FILE`): one test case per metric rule of each group, one per conversation for a
per-conversation rule, so a CI's test view lists what passed and what failed. Written with the standard library's
ElementTree (escaping and encoding are its job)."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

from .checks import Check, GateResult


def _message(check: Check) -> str:
    text = f"{check.metric} = {'unknown' if check.value is None else f'{check.value:.3f}'}"
    if check.ci:
        text += f" (95% CI {check.ci[0]:.3f}-{check.ci[1]:.3f})"
    return f"{text}: {check.detail}"


def junit_xml(result: GateResult, *, suite: str = "ragdive gate") -> str:
    suites = ET.Element("testsuites", name=suite)
    by_group: dict[str, list[Check]] = {}
    for check in result.checks:
        by_group.setdefault(check.group, []).append(check)
    for group, checks in by_group.items():
        failures = sum(not c.passed for c in checks)
        element = ET.SubElement(
            suites, "testsuite", name=group, tests=str(len(checks)), failures=str(failures), errors="0", skipped="0"
        )
        for check in checks:
            case = ET.SubElement(element, "testcase", classname=f"ragdive.{check.metric}", name=check.name)
            if not check.passed:
                failure = ET.SubElement(case, "failure", message=_message(check), type="GateFailed")
                lines = [_message(check)]
                lines += [f"worst: {w.conversation_id} ({w.value:.3f}) in {w.run_id}" for w in check.worst]
                failure.text = "\n".join(lines)
            else:
                ET.SubElement(case, "system-out").text = _message(check)
    suites.set("tests", str(len(result.checks)))
    suites.set("failures", str(len(result.failures)))
    ET.indent(suites)
    return ET.tostring(suites, encoding="unicode", xml_declaration=True) + "\n"


def write_junit(result: GateResult, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(junit_xml(result), encoding="utf-8")
