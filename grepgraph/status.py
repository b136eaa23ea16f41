"""One status report of an index for every entry point: ``grepgraph status``, MCP ``index_status``, ``/health``.

It adds to :meth:`CodeIndex.status` what says whether the answers are current: the git commit the
index reflects and the files changed since (a branch switch shows up here), whether a resident
service is following the repository, and how many vectors are still to be embedded.
"""

from __future__ import annotations

from grepgraph.retrievers.dense.sync import count_pending_vectors
from grepgraph.retrievers.source.freshness import freshness
from grepgraph.retrievers.store.index import CodeIndex, closing_connection

from .service_client import service_state


def pending_vectors(index: CodeIndex) -> int:
    """Vectors not embedded yet, over the views the index uses (searches rank those chunks without them)."""
    with closing_connection(index) as connection:
        chunks = connection.execute("SELECT COUNT(*) FROM chunks").fetchone()[0]
        return sum(count_pending_vectors(connection, view, tests)
                   for view, tests in index.test_views(chunks).items())


def index_report(index: CodeIndex) -> dict:
    """:meth:`CodeIndex.status` with freshness (commit, changed files) and the service's state."""
    report = index.status()
    with closing_connection(index) as connection:
        report.update(freshness(connection, index.repo, index.settings.max_file_bytes))
    report["vectors_pending_total"] = sum(report["vectors_pending"].values())
    report["service"] = service_state(index.index_dir)
    return report


def health_summary(index: CodeIndex) -> dict:
    """The compact freshness of an index for ``/health``: commits, changed files, pending vectors, service."""
    report = index_report(index)
    service = report["service"]
    return {"indexed_commit": report["indexed_commit"].get("commit", ""), "head": report["head"].get("commit", ""),
            "changed_since_index": report["changed_since_index"]["count"],
            "vectors_pending": report["vectors_pending_total"],
            "service": "watching" if service.get("watching") else "running" if service["running"] else "none"}


def freshness_lines(report: dict) -> list[str]:
    """The freshness part of a report as ``grepgraph status`` prints it."""
    indexed, head = report.get("indexed_commit") or {}, report.get("head") or {}
    lines = []
    if indexed or head:
        at = indexed.get("commit", "?")
        moved = f"; HEAD is now {head.get('commit')}" if head and head.get("commit") != indexed.get("commit") else ""
        branch = f" on {indexed['branch']}" if indexed.get("branch") else ""
        lines.append(f"commit:     index built at {at}{branch}{moved}")
    changed = report["changed_since_index"]
    if changed["count"]:
        shown = ", ".join(changed["paths"][:5]) + (", ..." if changed["count"] > 5 else "")
        lines.append(f"changed:    {changed['count']} files since the index ({changed['modified']} modified,"
                     f" {changed['added']} added, {changed['removed']} removed): {shown}")
    else:
        lines.append("changed:    nothing since the index")
    service = report["service"]
    if not service.get("running"):
        lines.append("service:    not running (the next search starts one)")
    else:
        watching = "watching for changes" if service.get("watching") else "not watching"
        searches = service.get("searches", 0)
        lines.append(f"service:    running (pid {service.get('pid')}), {watching}, {searches} searches")
        if service.get("last_error"):
            lines.append(f"            last problem: {service['last_error']}")
    return lines
