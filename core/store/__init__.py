"""The embedded store: a data directory with one SQLite database per cluster."""

from . import datadir
from .datadir import (
    BUSY_TIMEOUT_MS,
    KINDS,
    LOCAL,
    Cluster,
    ClusterInfo,
    DataDir,
    connect,
    default_data_dir,
    validate_cluster_name,
)
from .schema import MIGRATIONS, SCHEMA_VERSION

__all__ = ["MIGRATIONS", "SCHEMA_VERSION"]
__all__ += datadir.__all__
