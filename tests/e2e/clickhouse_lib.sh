# shellcheck shell=bash
# tests/e2e/clickhouse_lib.sh - a real clickhouse-server for one test
# (t_clickhouse_*.sh), started on loopback from a config of its own in the
# test's temp dir: its own data path and ports, nothing listening beyond
# 127.0.0.1, never the system service. Source after lib.sh and e2e_init.
#
#   ch_need        SKIP when the package is not installed (tests/install-deps.sh
#                  installs it with the other test tools)
#   ch_start       start it (first call picks free ports); CH_URL, CH_HTTP set
#   ch_stop        stop it (SIGTERM, then wait for it to be gone)
#   ch_q SQL       run SQL, print the answer (TSV); non-zero on an error
#
# The config names a cluster pmutop_test of two shards, both this server,
# with default databases s1 and s2 (Distributed(pmutop_test, '', T) reads
# s1.T and s2.T): README's cluster DDL without replication.

CH_BIN=${CH_BIN:-/usr/sbin/clickhouse-server}

ch_need() {
	[[ -x $CH_BIN ]] || skip "clickhouse-server is not installed ($CH_BIN; apt-get install " \
		"clickhouse-server, or bash tests/install-deps.sh)"
	command -v curl >/dev/null 2>&1 || skip "curl is not installed"
}

# Two free loopback ports (HTTP, native TCP: the server insists on one).
ch_ports() {
	python3 - <<'PY'
import socket
s = []
for _ in range(2):
    k = socket.socket(); k.bind(("127.0.0.1", 0)); s.append(k)
print(" ".join(str(k.getsockname()[1]) for k in s))
PY
}

ch_start() {
	local d=$T/ch
	if [[ -z ${CH_HTTP:-} ]]; then
		read -r CH_HTTP CH_TCP < <(ch_ports)
		mkdir -p "$d/data" "$d/tmp" "$d/fs" "$d/uf"
		cat >"$d/config.xml" <<XML
<?xml version="1.0"?>
<yandex>
  <logger><level>warning</level><log>$d/server.log</log><errorlog>$d/err.log</errorlog><console>0</console></logger>
  <listen_host>127.0.0.1</listen_host>
  <http_port>$CH_HTTP</http_port>
  <tcp_port>$CH_TCP</tcp_port>
  <path>$d/data/</path>
  <tmp_path>$d/tmp/</tmp_path>
  <format_schema_path>$d/fs/</format_schema_path>
  <user_files_path>$d/uf/</user_files_path>
  <users_config>$d/users.xml</users_config>
  <default_profile>default</default_profile>
  <default_database>default</default_database>
  <mark_cache_size>67108864</mark_cache_size>
  <uncompressed_cache_size>67108864</uncompressed_cache_size>
  <max_concurrent_queries>20</max_concurrent_queries>
  <remote_servers><pmutop_test>
    <shard><replica><host>127.0.0.1</host><port>$CH_TCP</port><default_database>s1</default_database></replica></shard>
    <shard><replica><host>127.0.0.1</host><port>$CH_TCP</port><default_database>s2</default_database></replica></shard>
  </pmutop_test></remote_servers>
</yandex>
XML
		cat >"$d/users.xml" <<XML
<?xml version="1.0"?>
<yandex>
  <profiles><default><max_memory_usage>1000000000</max_memory_usage><max_threads>1</max_threads></default></profiles>
  <users>
    <default><password></password><networks><ip>127.0.0.1</ip></networks><profile>default</profile><quota>default</quota></default>
    <agent><password>${CH_AGENT_PASSWORD:-s3cret-pw}</password><networks><ip>127.0.0.1</ip></networks><profile>default</profile><quota>default</quota></agent>
  </users>
  <quotas><default></default></quotas>
</yandex>
XML
	fi
	"$CH_BIN" --config-file="$d/config.xml" >"$d/out.log" 2>&1 &
	CH_PID=$!
	E2E_BG_PIDS+=("$CH_PID")
	for _ in $(seq 150); do
		if curl -fsS "http://127.0.0.1:$CH_HTTP/?query=SELECT%201" >/dev/null 2>&1; then
			CH_URL="clickhouse://127.0.0.1:$CH_HTTP"
			return 0
		fi
		kill -0 "$CH_PID" 2>/dev/null || break
		sleep 0.2
	done
	show "$d/out.log"; show "$d/err.log"
	fail "clickhouse-server did not answer on 127.0.0.1:$CH_HTTP"
}

ch_stop() {
	kill -TERM "$CH_PID" 2>/dev/null
	for _ in $(seq 150); do
		kill -0 "$CH_PID" 2>/dev/null || break
		sleep 0.1
	done
	kill -KILL "$CH_PID" 2>/dev/null
	wait "$CH_PID" 2>/dev/null
	return 0
}

ch_q() {
	curl -sS --fail-with-body --data-binary "$1" "http://127.0.0.1:$CH_HTTP/"
}
