"""Narration: books imported into projects of chapters and segments, rendered through the engine, exported."""

from core.narration import editing
from core.narration.book_import import Block, Document, DocumentError, parse_text, read_document
from core.narration.build import import_document, needs_import, source_identity
from core.narration.cluster_connect import ClusterError, ClusterInfo, connect, probe_cluster
from core.narration.cluster_job import ClusterRenderJob
from core.narration.cluster_render import ClusterStats, cluster_steps
from core.narration.editing import Edit, History, revert
from core.narration.export import (
    ExportCancelled,
    ExportEstimate,
    ExportProgress,
    ExportRequest,
    ExportResult,
    Placement,
    check_request,
    check_space,
    estimate_export,
    export_project,
    preview,
)
from core.narration.export_plan import EXPORT_SUFFIXES, BookInfo, parse_numbers
from core.narration.project import (
    SPEED_RANGE,
    Project,
    ProjectError,
    create_project,
    is_project,
    open_project,
    pause_seconds,
)
from core.narration.project_lock import LockHolder, ProjectLock, ProjectLocked
from core.narration.render import (
    RenderProgress,
    RenderSummary,
    clock,
    pending_steps,
    regenerate,
    regenerate_steps,
    render_pending,
    run_steps,
)
from core.narration.render_job import RenderDone, RenderJob, RenderStep
from core.narration.store_check import (
    MASTERING,
    STORE_RULES,
    FileCheck,
    MasteringPreset,
    StoreCheckError,
    StoreRules,
    check_file,
    check_files,
    room_tone,
)
from core.narration.voices import resolve_voices

__all__ = [
    "Block",
    "ClusterError",
    "ClusterInfo",
    "ClusterRenderJob",
    "ClusterStats",
    "Document",
    "Edit",
    "History",
    "DocumentError",
    "BookInfo",
    "EXPORT_SUFFIXES",
    "ExportCancelled",
    "ExportEstimate",
    "ExportProgress",
    "ExportRequest",
    "ExportResult",
    "FileCheck",
    "MASTERING",
    "MasteringPreset",
    "LockHolder",
    "Placement",
    "Project",
    "ProjectError",
    "ProjectLock",
    "ProjectLocked",
    "RenderDone",
    "RenderJob",
    "RenderProgress",
    "RenderStep",
    "RenderSummary",
    "SPEED_RANGE",
    "STORE_RULES",
    "StoreCheckError",
    "StoreRules",
    "check_file",
    "check_files",
    "check_request",
    "check_space",
    "clock",
    "cluster_steps",
    "connect",
    "create_project",
    "editing",
    "estimate_export",
    "export_project",
    "parse_numbers",
    "import_document",
    "is_project",
    "needs_import",
    "open_project",
    "parse_text",
    "pause_seconds",
    "pending_steps",
    "preview",
    "probe_cluster",
    "read_document",
    "regenerate",
    "regenerate_steps",
    "render_pending",
    "resolve_voices",
    "revert",
    "run_steps",
    "room_tone",
    "source_identity",
]
