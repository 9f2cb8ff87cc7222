"""Confluent REST API v3: the server of `jetlink serve` and the client of --rest-url."""
