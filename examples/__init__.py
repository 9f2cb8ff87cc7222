"""The example files (topologies, link configs, filter JSON) as package data: `jetlink demo`
reads them through importlib.resources, installed or from a checkout."""
