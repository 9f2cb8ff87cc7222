"""The live-server side of jetlink: targets, the nats-py connection, the JetStream and KV API
over it."""
