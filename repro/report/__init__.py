"""``repro report``: one self-contained HTML file for a run, a study or an evaluation directory."""

from repro.report.build import ReportResult, build_report, detect_kinds, write_report
from repro.report.collect import ReportError, RunReport, collect_run
from repro.report.page import embed_json

__all__ = [
    "ReportError",
    "ReportResult",
    "RunReport",
    "build_report",
    "collect_run",
    "detect_kinds",
    "embed_json",
    "write_report",
]
