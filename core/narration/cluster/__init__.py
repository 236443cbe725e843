"""Rendering a project on Ray: connecting (``connect.py``), the model each node uses (``model.py``), the actors
(``actor.py``), the owner that hands out work and stores every take (``render.py``) and the render as a worker job
(``job.py``); ``docs/CLUSTER.md``."""

from core.narration.cluster.connect import ClusterError, ClusterInfo, connect, probe_cluster
from core.narration.cluster.job import ClusterRenderJob
from core.narration.cluster.render import ClusterStats, cluster_steps

__all__ = [
    "ClusterError",
    "ClusterInfo",
    "ClusterRenderJob",
    "ClusterStats",
    "cluster_steps",
    "connect",
    "probe_cluster",
]
