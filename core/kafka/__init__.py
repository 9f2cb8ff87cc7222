"""The Kafka side of jetlink: topics, consumer groups, cluster links and mirror topics.

Every cluster of the data directory holds topics as well as streams (its own SQLite database,
schema components ``kafka``, ``kafka_links`` and ``kafka_mirrors``). Modules:

- :mod:`.errors`: KafkaError, Kafka's error names and codes;
- :mod:`.partitioner`: Kafka's murmur2 and default partitioner;
- :mod:`.topics`: topics, records, retention and compaction, consumer groups (the ``Kafka``
  facade; its state in :mod:`.topic_store`, its parts in :mod:`.topic_records`,
  :mod:`.topic_configs`, :mod:`.topic_types`, :mod:`.topic_admin`, :mod:`.topic_log`,
  :mod:`.topic_retention`, :mod:`.topic_groups`);
- :mod:`.links`: cluster link configurations, filters, link store and states;
- :mod:`.mirrors`: mirror topics (replication, config and offset sync, promote / failover
  with offset clamping, failing back: the ``Mirrors`` facade; its state in
  :mod:`.mirror_state`, its parts in :mod:`.mirror_model`, :mod:`.mirror_create`,
  :mod:`.mirror_copy`, :mod:`.mirror_promote`, :mod:`.mirror_step`, :mod:`.mirror_bulk`).
  Facades compose their rule modules, which take the state as their first argument:
  arrows point down (facade -> rules -> state -> model -> store).
- :mod:`.schema`: who makes the components' tables and when (``create_schema``; a refused
  write or a viewer makes none); :mod:`.tables`: the API objects' side of it.

Specification: Confluent's "Mirror Topics" documentation and shared/reference/
kafka-cluster-linking.md; decisions in docs/kafka.md.
"""
