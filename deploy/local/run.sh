#!/usr/bin/env bash
# `make run`: one backend with embedded etcd and NATS, plus a local agent, in the foreground.
# Ctrl-C stops both; the agent stopping alone leaves the backend running, so its keepalive alert
# can be watched. Every port and name can be changed through the environment, or as a make variable
# (`make run API_PORT=9080`; README, "Two commands").
set -uo pipefail
cd "$(dirname "$0")/../.."

STATE_DIR=${STATE_DIR:-.state}
API_PORT=${API_PORT:-8080}
AGENT_PORT=${AGENT_PORT:-8081}
# The legacy API (Sensu Classic 1.x clients): on localhost only here, it has no RBAC of its own.
LEGACY_API_PORT=${LEGACY_API_PORT:-4567}
ETCD_CLIENT_PORT=${ETCD_CLIENT_PORT:-2379}
ETCD_PEER_PORT=${ETCD_PEER_PORT:-2380}
NATS_PORT=${NATS_PORT:-4222}
AGENT_NAME=${AGENT_NAME:-$(hostname)}
AGENT_API_PORT=${AGENT_API_PORT:-3031}
AGENT_SOCKET_PORT=${AGENT_SOCKET_PORT:-3030}
STATSD_PORT=${STATSD_PORT:-8125}
LOG_LEVEL=${LOG_LEVEL:-info}
mkdir -p "$STATE_DIR/agent"
# Where the embedded etcd and NATS listen; init reaches etcd through the same flag.
STORE_ARGS=(--etcd-listen-client-urls "http://127.0.0.1:$ETCD_CLIENT_PORT"
  --etcd-listen-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" --nats-listen "127.0.0.1:$NATS_PORT")
# The programs run compiled (bin/ launchers import dist/); `make run` has just built them, this covers
# a direct run after an edit (docs/operations.md#compiled-programs).
node --import tsx deploy/build/main.ts --if-stale || exit 1

backend_pid="" agent_pid=""
stop() {
  trap - INT TERM
  echo; echo "stopping..."
  [ -n "$agent_pid" ] && kill -TERM "$agent_pid" 2>/dev/null
  [ -n "$backend_pid" ] && kill -TERM "$backend_pid" 2>/dev/null
  wait 2>/dev/null
  exit 0
}
trap stop INT TERM

bin/monitor-backend start --state-dir "$STATE_DIR/backend" --api-port "$API_PORT" --agent-port "$AGENT_PORT" \
  "${STORE_ARGS[@]}" --legacy-api-host 127.0.0.1 --legacy-api-port "$LEGACY_API_PORT" --log-level "$LOG_LEVEL" ${BACKEND_ARGS:-} &
backend_pid=$!

for _ in $(seq 1 150); do
  curl -fsS "http://127.0.0.1:$API_PORT/health" >/dev/null 2>&1 && break
  kill -0 "$backend_pid" 2>/dev/null || { echo "monitor-backend did not start (see above)"; exit 1; }
  sleep 0.2
done

# The administrator, and an API key kept in the state dir so the hints below stay valid across runs.
ADMIN_USER=${ADMIN_USER:-admin}
ADMIN_PASSWORD=${ADMIN_PASSWORD:-P@ssw0rd!}
KEY_FILE="$STATE_DIR/admin.api-key"
[ -s "$KEY_FILE" ] || node -e 'process.stdout.write(require("crypto").randomUUID())' > "$KEY_FILE"
API_KEY=$(cat "$KEY_FILE")
bin/monitor-backend init "${STORE_ARGS[@]}" ${BACKEND_ARGS:-} --cluster-admin-username "$ADMIN_USER" --cluster-admin-password "$ADMIN_PASSWORD" \
  --cluster-admin-api-key "$API_KEY" --ignore-already-initialized >/dev/null || { echo "monitor-backend init failed"; stop; }

bin/monitor-agent start --backend-url "ws://127.0.0.1:$AGENT_PORT" --name "$AGENT_NAME" \
  --subscriptions "${SUBSCRIPTIONS:-linux}" --cache-dir "$STATE_DIR/agent" --api-port "$AGENT_API_PORT" \
  --socket-port "$AGENT_SOCKET_PORT" --statsd-metrics-port "$STATSD_PORT" --log-level "$LOG_LEVEL" ${AGENT_ARGS:-} &
agent_pid=$!
echo "$agent_pid" > "$STATE_DIR/agent.pid"

cat <<INFO

  monitor is running
    dashboard     http://127.0.0.1:$API_PORT/   (sign in as $ADMIN_USER / $ADMIN_PASSWORD)
    REST API      http://127.0.0.1:$API_PORT   (health: curl http://127.0.0.1:$API_PORT/health)
    agent socket  ws://127.0.0.1:$AGENT_PORT
    legacy API    http://127.0.0.1:$LEGACY_API_PORT   (curl http://127.0.0.1:$LEGACY_API_PORT/info; no auth unless BACKEND_ARGS has --legacy-api-user/--legacy-api-password)
    administrator $ADMIN_USER / $ADMIN_PASSWORD, API key $API_KEY
    the agent's entity:
      curl -H "Authorization: Key $API_KEY" http://127.0.0.1:$API_PORT/api/core/v2/namespaces/default/entities/$AGENT_NAME
    its keepalive event:
      curl -H "Authorization: Key $API_KEY" http://127.0.0.1:$API_PORT/api/core/v2/namespaces/default/events/$AGENT_NAME/keepalive
    an event through the agent's HTTP API (queued on disk until the backend has it):
      curl -X POST -H 'Content-Type: application/json' http://127.0.0.1:$AGENT_API_PORT/events \\
        -d '{"check":{"metadata":{"name":"hello"},"status":1,"output":"hello from curl"}}'
    a token instead of the key:
      curl -u $ADMIN_USER:'$ADMIN_PASSWORD' http://127.0.0.1:$API_PORT/auth
    stop the agent alone (the backend stays; its keepalive alert comes after the warning timeout):
      kill \$(cat $STATE_DIR/agent.pid)
    ports: etcd $ETCD_CLIENT_PORT/$ETCD_PEER_PORT, NATS $NATS_PORT, agent sockets $AGENT_SOCKET_PORT, StatsD $STATSD_PORT (udp)
  Ctrl-C stops everything.

INFO
# Ctrl-C reaches every process of the group. The agent stopping (killed, or failing) leaves the
# backend up, so its keepalive alert can be watched; the backend stopping ends everything.
wait -n "$backend_pid" "$agent_pid"
if kill -0 "$backend_pid" 2>/dev/null; then
  agent_pid=""
  rm -f "$STATE_DIR/agent.pid"
  echo "monitor-agent stopped; the backend keeps running (Ctrl-C stops it)"
  wait "$backend_pid"
fi
stop
