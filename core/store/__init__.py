"""The embedded store: a data directory with one SQLite database per cluster."""

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

# the schema's version and migrations, then the data directory's names (datadir.__all__)
__all__ = [
    "MIGRATIONS",
    "SCHEMA_VERSION",
    "BUSY_TIMEOUT_MS",
    "KINDS",
    "LOCAL",
    "Cluster",
    "ClusterInfo",
    "DataDir",
    "connect",
    "default_data_dir",
    "validate_cluster_name",
]
