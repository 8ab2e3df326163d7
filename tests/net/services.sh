#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The network storage tests/bats/38-network.bats runs on (issue 19):
#   - an sshd on 127.0.0.1 (key-only, its own host and client keys), for
#     sshfs;
#   - glusterd with one volume of one brick, on a loopback address of
#     its own (127.0.0.N, N from 3 to 254: GlusterFS refuses 127.0.0.1
#     as a brick host, and a brick always reaches its glusterd on port
#     24007 of the brick's host, so two instances, e.g. two CI runs in
#     two worktrees, need two addresses); its CLI socket and run
#     directory are in STATEDIR too;
#   - rclone serve sftp on 127.0.0.1, a backup remote.
# Everything lives in STATEDIR (config, keys, state, logs); nothing is
# written to ~/.ssh, /etc, /var/lib/glusterd or /run/gluster. Two things
# land in system paths: /run/sshd (sshd's privilege separation
# directory, removed by stop if start made it) and the brick's log,
# which glusterd always puts in /var/log/glusterfs/bricks/ (removed by
# stop). Clients (sshfs, glusterfs mounts) are the tests' own.
#
# Usage: services.sh start STATEDIR   (prints nothing; STATEDIR/env)
#        services.sh stop STATEDIR
#        services.sh env STATEDIR     (the variables the tests read)
#        services.sh check            (exit 0 if every program is here)
set -eu

need=(/usr/sbin/sshd ssh ssh-keygen sshfs glusterd gluster glusterfs rclone)

check() {
	local p missing=()
	for p in "${need[@]}"; do
		command -v "$p" >/dev/null 2>&1 || missing+=("$p")
	done
	[ ${#missing[@]} -eq 0 ] || {
		echo "missing: ${missing[*]} (contrib/install-deps.sh installs them)"
		return 1
	}
}

# free_port: a TCP port nobody listens on (loopback).
free_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# wait_port HOST PORT: until something listens there (at most 10 s).
wait_port() {
	local _
	for _ in $(seq 1 100); do
		python3 -c 'import socket, sys; socket.create_connection((sys.argv[1], int(sys.argv[2])), 1)' \
			"$1" "$2" 2>/dev/null && return 0
		sleep 0.1
	done
	echo "nothing listens on $1:$2" >&2
	return 1
}

start_sshd() {
	local d=$S/ssh port
	mkdir -p "$d/export"
	chmod 700 "$d"
	ssh-keygen -q -t ed25519 -N '' -f "$d/host_key"
	ssh-keygen -q -t ed25519 -N '' -f "$d/client_key"
	cp "$d/client_key.pub" "$d/authorized_keys"
	port=$(free_port)
	cat >"$d/sshd_config" <<-EOF
		Port $port
		ListenAddress 127.0.0.1
		HostKey $d/host_key
		PidFile $d/sshd.pid
		AuthorizedKeysFile $d/authorized_keys
		PasswordAuthentication no
		KbdInteractiveAuthentication no
		PermitRootLogin prohibit-password
		StrictModes no
		UsePAM no
		Subsystem sftp internal-sftp
	EOF
	echo "[127.0.0.1]:$port $(cat "$d/host_key.pub")" >"$d/known_hosts"
	cat >"$d/ssh_config" <<-EOF
		Host xtsfs-net
			HostName 127.0.0.1
			Port $port
			User root
			IdentityFile $d/client_key
			IdentitiesOnly yes
			UserKnownHostsFile $d/known_hosts
			StrictHostKeyChecking yes
			BatchMode yes
	EOF
	# privilege separation directory (Debian's init script makes it)
	if [ ! -d /run/sshd ]; then
		mkdir -p /run/sshd
		touch "$S/made-run-sshd"
	fi
	/usr/sbin/sshd -f "$d/sshd_config" -E "$d/sshd.log"
	wait_port 127.0.0.1 "$port"
	{
		echo "NET_SSH_CONFIG=$d/ssh_config"
		echo "NET_SSH_HOST=xtsfs-net"
		echo "NET_SSH_EXPORT=$d/export"
	} >>"$S/env"
}

# free_gluster_addr: a loopback address 127.0.0.N (3 <= N <= 254) with
# nothing on port 24007, tried in a random order (127.0.0.2 is left to
# the earlier version of this script, which always took it).
free_gluster_addr() {
	python3 - <<-'PY'
		import random, socket
		ns = list(range(3, 255))
		random.shuffle(ns)
		for n in ns:
		    s = socket.socket()
		    try:
		        s.bind(("127.0.0.%d" % n, 24007))
		    except OSError:
		        continue
		    finally:
		        s.close()
		    print("127.0.0.%d" % n)
		    break
		else:
		    raise SystemExit("no loopback address with port 24007 free")
	PY
}

# gluster_cli ARGS...: the CLI of our glusterd (its own socket, log)
gluster_cli() {
	timeout 60 gluster --mode=script --glusterd-sock="$S/gluster/glusterd.socket" \
		--log-file="$S/gluster/log/cli.log" "$@"
}

start_gluster() {
	local d=$S/gluster addr base
	mkdir -p "$d/lib" "$d/run" "$d/brick" "$d/log"
	# the brick's socket goes to /run/gluster whatever the options say
	[ -e /run/gluster ] || touch "$S/made-run-gluster"
	addr=$(free_gluster_addr)
	# bricks take ports from base-port up; a range of our own keeps two
	# instances from racing for the same one
	base=$((49152 + RANDOM % 100 * 100))
	echo "$addr" >"$d/addr"
	cat >"$d/glusterd.vol" <<-EOF
		volume management
		    type mgmt/glusterd
		    option working-directory $d/lib
		    option run-directory $d/run
		    option glusterd-sockfile $d/glusterd.socket
		    option transport-type socket
		    option transport.socket.bind-address $addr
		    option transport.socket.listen-port 24007
		    option ping-timeout 0
		    option event-threads 1
		    option base-port $base
		    option max-port $((base + 99))
		end-volume
	EOF
	glusterd -f "$d/glusterd.vol" -p "$d/glusterd.pid" \
		-l "$d/log/glusterd.log" --log-level=WARNING
	wait_port "$addr" 24007
	gluster_cli volume create xtsfs-net "$addr:$d/brick" force >"$d/log/create.log"
	gluster_cli volume start xtsfs-net >"$d/log/start.log"
	# the brick's socket in /run/gluster (-S), for stop to remove
	pgrep -af -- "--brick-name $d/brick" | sed -n 's/.* -S \([^ ]*\) .*/\1/p' >"$d/brick-socket"
	{
		echo "NET_GLUSTER_SERVER=$addr"
		echo "NET_GLUSTER_VOLUME=xtsfs-net"
		echo "NET_GLUSTER_LOG=$d/log"
	} >>"$S/env"
}

start_rclone() {
	local d=$S/rclone port pass
	mkdir -p "$d/remote"
	port=$(free_port)
	pass=$(head -c 18 /dev/urandom | base64 | tr -d '/+=')
	rclone serve sftp "$d/remote" --addr "127.0.0.1:$port" --user xtsfs \
		--pass "$pass" --config "$d/serve.conf" --log-file "$d/serve.log" &
	echo $! >"$d/serve.pid"
	cat >"$d/rclone.conf" <<-EOF
		[xtsfs-net]
		type = sftp
		host = 127.0.0.1
		port = $port
		user = xtsfs
		pass = $(rclone obscure "$pass")
		shell_type = none
		set_modtime = true
	EOF
	chmod 600 "$d/rclone.conf"
	wait_port 127.0.0.1 "$port"
	{
		echo "NET_RCLONE_CONFIG=$d/rclone.conf"
		echo "NET_RCLONE_REMOTE=xtsfs-net:"
		echo "NET_RCLONE_DIR=$d/remote"
	} >>"$S/env"
}

start() {
	check
	mkdir -p "$S"
	: >"$S/env"
	start_sshd
	start_gluster
	start_rclone
}

# kill_pidfile FILE: end the process FILE names, wait for it (5 s).
kill_pidfile() {
	local pid _
	[ -s "$1" ] || return 0
	pid=$(cat "$1")
	kill "$pid" 2>/dev/null || return 0
	for _ in $(seq 1 50); do
		kill -0 "$pid" 2>/dev/null || return 0
		sleep 0.1
	done
	kill -9 "$pid" 2>/dev/null || true
}

stop() {
	local d=$S/gluster p
	[ -d "$S" ] || return 0
	if [ -s "$d/glusterd.pid" ]; then
		gluster_cli volume stop xtsfs-net force >/dev/null 2>&1 || true
		kill_pidfile "$d/glusterd.pid"
		# the brick process and helpers, found by our own paths only
		for p in $(pgrep -f -- "$d/" || true); do kill "$p" 2>/dev/null || true; done
		sleep 0.2
		for p in $(pgrep -f -- "$d/" || true); do kill -9 "$p" 2>/dev/null || true; done
		# glusterd names the brick's log after the brick's path
		p=${d#/}/brick
		rm -f "/var/log/glusterfs/bricks/${p//\//-}.log"
		p=$(cat "$d/brick-socket" 2>/dev/null || true)
		case $p in /var/run/gluster/*.socket | /run/gluster/*.socket) rm -f "$p" ;; esac
		# /run/gluster if we made it, unless another glusterd uses it
		if [ -e "$S/made-run-gluster" ] && ! pgrep -x glusterd >/dev/null; then
			find /run/gluster -depth -type d -empty -delete 2>/dev/null || true
		fi
	fi
	kill_pidfile "$S/ssh/sshd.pid"
	if [ -e "$S/made-run-sshd" ]; then rmdir /run/sshd 2>/dev/null || true; fi
	kill_pidfile "$S/rclone/serve.pid"
	rm -rf "$S"
}

case ${1:-} in
check) check ;;
start) S=$2 && start ;;
stop) S=$2 && stop ;;
env) cat "$2/env" ;;
*)
	echo "usage: $0 start|stop|env STATEDIR | check" >&2
	exit 2
	;;
esac
