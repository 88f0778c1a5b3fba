#!/bin/sh
# Read and exec confinement, end to end: the built-in protected paths, deny
# entries, W^X (nothing the run can write can be executed or mapped
# executable), an exec allow-list, device reads, audit mode, and processes
# outside the run.  Every denial is checked for its errno (by fsprobe) and
# for its exact audit record.  Runs inside the VM as root: tests/vm/run-suite.
. /ext/suite/lib.sh

WS=/srv/cws			# same mount as /etc: a hard link from /etc/shadow is possible
ENV=$T/confine.yaml
cat > "$ENV" <<EOT
sandbox:
  # the suites were written for root: uid 0, still without capabilities
  identity: {uid: 0, gid: 0}
  filesystem:
    root: read_only
    workspace:
      path: $WS
  acknowledge_unenforced: [filesystem.exec, network_egress.default]
EOT

# What the protected set guards, made outside any run (the guest has none of it).
echo 'root:*:19000:0:99999:7:::' > /etc/shadow
chmod 640 /etc/shadow
mkdir -p /root /home/alice "$WS"
echo secret > /root/secret
echo x > /home/alice/notes

# Files of the exec cases, made outside any run (as an earlier run, a
# tarball or a git checkout would leave them).
cp "$BIN/fsprobe" "$WS/fsprobe"			# a binary the run could have written
cp "$BIN/fsprobe" "$WS/blob"			# a "shared library" it could have written
printf '#!/bin/sh\nexit 0\n' > "$WS/script.sh"
printf '#!%s\n' "$WS/fsprobe" > /opt/tether-cscript	# a script outside (in a system tree), its interpreter inside
chmod 755 "$WS/fsprobe" "$WS/blob" "$WS/script.sh" /opt/tether-cscript
ln -sfn /etc/shadow "$WS/shadow-link"

# to_re RECORD: RECORD as an anchored-by-grep -x ERE, where @RULE@ stands for
# any rule number (protected rules are added to every run, so the numbers of
# the rules sorted after them move), @SEQ@ for any sequence number and @COMM@
# for fsprobe or one of its io_uring workers.
to_re() {
	printf '%s\n' "$1" | sed -e 's#[][\.*^$+?(){}|]#\\&#g' -e 's#@RULE@#[0-9]+#g' \
		-e 's#@SEQ@#[0-9]+#g' -e 's#@COMM@#(fsprobe|iou-wrk-[0-9]+)#g'
}

# expect_re AUDIT_FILE RECORD: the normalized stream holds a line that is
# RECORD, placeholders aside (see to_re).
expect_re() {
	if normalize "$1" | grep -qxE "$(to_re "$2")"; then
		return 0
	fi
	echo "  expected record: $2"
	echo "  audit stream was:"
	normalize "$1" | sed 's/^/    /'
	return 1
}

# The reason fields of a record.
protected() { echo "\"reason\":\"protected\",\"rule\":@RULE@,\"rule_path\":\"$1\""; }
ruled() { echo "\"reason\":\"rule\",\"rule\":@RULE@,\"rule_path\":\"$1\""; }
FORBIDDEN='"reason":"forbidden"'
PROC_OTHER='"reason":"protected"'	# /proc/PID of a process outside the run: no rule

# record ID OP PATH ACCESS DECISION ERRNO REASON_FIELDS [COMM]: one normalized
# fs record with seq 1; ACCESS or ERRNO "-" leaves that field out.
record() {
	r_access=
	[ "$4" = - ] || r_access="\"access\":\"$4\","
	r_errno=
	[ "$6" = - ] || r_errno="\"errno\":\"$6\","
	echo "{\"seq\":2,\"run_id\":\"$1\",\"kind\":\"$(kind_of "$2")\",\"op\":\"$2\",\"path\":\"$3\",$r_access\"decision\":\"$5\",$r_errno$7,\"uid\":0,\"comm\":\"${8:-fsprobe}\",\"exe\":\"$BIN/fsprobe\"}"
}

# denied NAME ID OP PATH_IN_RECORD ACCESS REASON_FIELDS PROBE_ARGS...: fsprobe
# in a run under $ENV sees EACCES, and the stream holds exactly the record.
# $COMM (default fsprobe) is the record's comm.
denied() {
	name=$1 id=$2 op=$3 rpath=$4 access=$5 reason=$6
	shift 6
	in_run "$id" EACCES "$@"
	if [ "$RC" -ne 0 ]; then
		fail "$name" "fsprobe did not see EACCES (tether exit $RC)"
	elif ! expect_re "$T/$id.audit" "$(record "$id" "$op" "$rpath" "$access" deny EACCES "$reason" "${COMM:-fsprobe}")"; then
		fail "$name" "audit record missing or different"
	else
		pass "$name"
	fi
}

# allowed NAME ID SHELL_COMMANDS: the commands succeed in a run under $ENV
# and no fs denial is recorded.
allowed() {
	rm -f "$T/$2.audit"
	tether run --envelope "$ENV" --run-id "$2" --audit "$T/$2.audit" -- /bin/sh -e -c "$3"
	RC=$?
	if [ "$RC" -eq 0 ] && no_denials "$T/$2.audit"; then
		pass "$1"
	else
		fail "$1" "exit $RC"
		cat "$T/$2.audit"
	fi
}

# --- reads: the built-in protected set --------------------------------------
denied "read /etc/shadow (protected)" cr1 open_read /etc/shadow read "$(protected /etc/shadow)" \
	read /etc/shadow
denied "read a file in /root (protected)" cr2 open_read /root/secret read "$(protected /root)" \
	read /root/secret
denied "list /home (protected; a directory is read-opened too)" cr3 open_read /home read \
	"$(protected /home)" readdir /home
denied "read /etc/shadow through a symlink planted in the workspace" cr4 open_read /etc/shadow read \
	"$(protected /etc/shadow)" read "$WS/shadow-link"
denied "read /etc/shadow through .. out of the workspace" cr5 open_read /etc/shadow read \
	"$(protected /etc/shadow)" read "$WS/../../etc/shadow"
denied "read /etc/shadow through /proc/self/root" cr6 open_read /etc/shadow read \
	"$(protected /etc/shadow)" read /proc/self/root/etc/shadow
# No run may make an io_uring instance (docs/kernel-surface.md): its openat
# never starts.
in_run cr7 EPERM uring-read /etc/shadow
[ "$RC" -eq 0 ] && expect_re "$T/cr7.audit" "$(record cr7 anon_inode '[io_uring]' - deny EPERM \
	'"reason":"forbidden"')" && ! grep -q '"op":"open_read"' "$T/cr7.audit" &&
	pass "read /etc/shadow through an io_uring openat: no io_uring instance in a run" ||
	fail "read /etc/shadow through an io_uring openat" "exit $RC: $(cat "$T/cr7.audit")"
# open_by_handle_at needs CAP_DAC_READ_SEARCH, which no run has: the kernel
# refuses it (EPERM) before any file is opened.  Checks of the file-permission
# capabilities are not recorded (every DAC refusal makes them).
in_run cr8 EPERM by-handle-read /etc/shadow
[ "$RC" -eq 0 ] && ! grep -q '"kind":"fs".*"decision":"allow"' "$T/cr8.audit" &&
	pass "read /etc/shadow through open_by_handle_at: no capability for it" ||
	fail "read /etc/shadow through open_by_handle_at" "exit $RC: $(cat "$T/cr8.audit")"
denied "hard link /etc/shadow into the workspace" cr9 link /etc/shadow write \
	"$(protected /etc/shadow)" link /etc/shadow "$WS/shadow-hard"
[ ! -e "$WS/shadow-hard" ] && pass "the denied hard link left no name" ||
	fail "the denied hard link left no name" "$WS/shadow-hard exists"
denied "read /proc/1/status (init is outside the run)" cr10 open_read /proc/1/status read \
	"$PROC_OTHER" read /proc/1/status
denied "read /proc/1/net/unix (the namespace of a process outside the run)" cr10n open_read \
	/proc/1/net/unix read "$PROC_OTHER" read /proc/1/net/unix
denied "read /sys/kernel/security/lsm (protected)" cr11 open_read /sys/kernel/security/lsm read \
	"$(protected /sys/kernel/security)" read /sys/kernel/security/lsm

allowed "its own /proc/self/status, /etc/passwd, /opt/tether-tests/bin/fsprobe and /bin/busybox are readable" cr12 "
	$BIN/fsprobe ok read /proc/self/status
	$BIN/fsprobe ok read /etc/passwd
	$BIN/fsprobe ok read $BIN/fsprobe
	$BIN/fsprobe ok read /bin/busybox
	$BIN/fsprobe ok readdir /etc
	$BIN/fsprobe ok read $WS/script.sh"

# --- reads: envelope rules ----------------------------------------------------
mkdir -p "$WS/secret"
echo key > "$WS/secret/k"
cat > "$T/deny.yaml" <<EOT
sandbox:
  # the suites were written for root: uid 0, still without capabilities
  identity: {uid: 0, gid: 0}
  filesystem:
    root: read_only
    workspace:
      path: $WS
    deny: [secret/**]
  acknowledge_unenforced: [filesystem.exec, network_egress.default, filesystem.deny]
EOT
ENV=$T/deny.yaml
denied "a deny: entry's file is unreadable" cr13 open_read "$WS/secret/k" read "$(ruled "$WS/secret")" \
	read "$WS/secret/k"

cat > "$T/shadow.yaml" <<EOT
sandbox:
  # the suites were written for root: uid 0, still without capabilities
  identity: {uid: 0, gid: 0}
  filesystem:
    root: read_only
    workspace:
      path: $WS
    read: [/etc/shadow]
  acknowledge_unenforced: [filesystem.exec, network_egress.default, filesystem.exact_paths]
EOT
ENV=$T/shadow.yaml
allowed "an envelope naming /etc/shadow exactly under read: makes it readable" cr14 "
	$BIN/fsprobe ok read /etc/shadow"
ENV=$T/confine.yaml

# --- exec and W^X: nothing the run can write runs or maps executable -------
denied "exec of a binary in the workspace" ce1 exec "$WS/fsprobe" exec "$(ruled "$WS")" \
	exec "$WS/fsprobe" ok nop
denied "exec of a #!/bin/sh script in the workspace" ce2 exec "$WS/script.sh" exec "$(ruled "$WS")" \
	exec "$WS/script.sh"
denied "exec of a script outside whose #! interpreter is in the workspace" ce3 exec "$WS/fsprobe" exec \
	"$(ruled "$WS")" exec /opt/tether-cscript
denied "execveat(O_PATH fd, AT_EMPTY_PATH) of a binary in the workspace" ce4 exec "$WS/fsprobe" exec \
	"$(ruled "$WS")" execveat-opath "$WS/fsprobe" ok nop
in_run ce5 EACCES fexecve-memfd "$BIN/fsprobe" ok nop
if [ "$RC" -eq 0 ] && normalize "$T/ce5.audit" | grep -q '"op":"exec".*"decision":"deny","errno":"EACCES","reason":"unresolved_path"'; then
	pass "fexecve of a memfd (a binary with no path)"
else
	fail "fexecve of a memfd" "exit $RC"
	cat "$T/ce5.audit"
fi
denied "mmap(PROT_EXEC) of a file in the workspace" ce6 mmap_exec "$WS/blob" exec "$(ruled "$WS")" \
	mmap-exec "$WS/blob"
denied "mprotect(PROT_EXEC) of a file mapping from the workspace" ce7 mprotect_exec "$WS/blob" exec \
	"$(ruled "$WS")" mprotect-exec "$WS/blob"
allowed "exec of /opt/tether-tests/bin/fsprobe and mmap(PROT_EXEC) of it are allowed" ce8 "
	$BIN/fsprobe ok exec $BIN/fsprobe ok nop
	$BIN/fsprobe ok execveat-opath $BIN/fsprobe ok nop
	$BIN/fsprobe ok mmap-exec $BIN/fsprobe
	$BIN/fsprobe ok mprotect-exec $BIN/fsprobe
	$BIN/fsprobe ok exec /bin/busybox true"

# An exec: list: the listed paths (a relative one in the workspace included)
# run, nothing else does.
mkdir -p "$WS/bin"
cp "$BIN/fsprobe" "$WS/bin/tool"
cat > "$T/exec.yaml" <<EOT
sandbox:
  # the suites were written for root: uid 0, still without capabilities
  identity: {uid: 0, gid: 0}
  filesystem:
    root: read_only
    workspace:
      path: $WS
    exec: [bin/**, $BIN/**]
  acknowledge_unenforced: [filesystem.exec, network_egress.default]
EOT
ENV=$T/exec.yaml
# (No /bin/sh -c here: /bin/sh is busybox, which this envelope does not list.)
in_run ce9 ok exec "$WS/bin/tool" ok nop
[ "$RC" -eq 0 ] && no_denials "$T/ce9.audit" &&
	pass "exec: [bin/**] (relative) lets a binary in \$WS/bin run" ||
	fail "exec: [bin/**] (relative)" "exit $RC"
in_run ce9w ok write "$WS/bin/new"
[ "$RC" -eq 0 ] && no_denials "$T/ce9w.audit" &&
	pass "an exec: entry on a writable path keeps it writable" ||
	fail "exec: entry on a writable path" "exit $RC"
denied "with an exec: list, a binary outside every entry does not run" ce10 exec /bin/busybox exec \
	"$(ruled /)" exec /bin/busybox true
denied "with an exec: list, the rest of the workspace stays W^X" ce11 exec "$WS/fsprobe" exec \
	"$(ruled "$WS")" exec "$WS/fsprobe" ok nop
ENV=$T/confine.yaml

# --- devices: only the built-in ones can be opened, for reading too --------
[ -e /srv/cmem ] || mknod /srv/cmem c 1 1	# /dev/mem's numbers, made outside any run
denied "read-open a node with /dev/mem's numbers" cd1 open_device /srv/cmem - "$FORBIDDEN" \
	read /srv/cmem
denied "read-open /dev/kmsg" cd2 open_device /dev/kmsg - "$FORBIDDEN" read /dev/kmsg
allowed "/dev/urandom, /dev/null and /dev/zero are readable" cd3 "
	$BIN/fsprobe ok read /dev/urandom
	$BIN/fsprobe ok read /dev/null
	$BIN/fsprobe ok read /dev/zero"

# --- the run's private /tmp: its own tmpfs in its own mount namespace ---------
# (tests/vm/suite/scratch.sh has the rest: /dev/shm, HOME, other runs, @tmp)
rm -f "$T/ct1.audit" "$T/ct1.out" /tmp/ct1-host
echo host > /tmp/ct1-host
tether run --envelope "$ENV" --run-id ct1 --audit "$T/ct1.audit" -- /bin/sh -c "
	[ \"\$TMPDIR\" = /tmp ] || exit 10
	$BIN/fsprobe ok write /tmp/scratch || exit 11
	$BIN/fsprobe ok mkdir /tmp/d || exit 12
	cp $BIN/fsprobe /tmp/tool && chmod 755 /tmp/tool || exit 13
	$BIN/fsprobe EACCES exec /tmp/tool ok nop || exit 14
	$BIN/fsprobe ENOENT read /tmp/ct1-host || exit 15"
RC=$?
if [ "$RC" -eq 0 ] && [ "$(cat /tmp/ct1-host)" = host ] && [ ! -e /tmp/scratch ] && [ ! -e /tmp/tool ] &&
	grep -q '"event":"start",.*"tmpdir":"/tmp"' "$T/ct1.audit" &&
	[ "$(grep -c '"decision":"deny"' "$T/ct1.audit")" -eq 1 ] &&
	grep -q '"op":"exec","path":"/tmp/tool","access":"exec","decision":"deny","errno":"EACCES","reason":"rule"' "$T/ct1.audit" &&
	grep -q '"event":"cleanup",.*"tmpdir_removed":true' "$T/ct1.audit"; then
	pass "TMPDIR is the run's own /tmp: writable, never executable, the host's hidden, gone at the end"
else
	fail "private /tmp" "exit $RC: $(cat "$T/ct1.audit")"
fi
rm -f /tmp/ct1-host

# --- ptys: only the run's own --------------------------------------------------
# Another session's terminal (here: a pty held by a process outside the run) is
# a device node like any other: reading it would steal that session's input.
mkdir -p "$T/pty"
"$BIN/fsprobe" ok own-pty hold > "$T/pty/held" 2>/dev/null &
holder=$!
for _ in 1 2 3 4 5 6 7 8 9 10; do [ -s "$T/pty/held" ] && break; sleep 0.2; done
foreign=$(head -n 1 "$T/pty/held")
case "$foreign" in
/dev/pts/*)
	denied "open another session's pty (held outside the run)" cd4 open_device "$foreign" - \
		"$FORBIDDEN" open-rw "$foreign" ;;
*) fail "open another session's pty" "no pty held outside the run ('$foreign')" ;;
esac
allowed "a pty the run allocates is its own: by ptsname() path and by TIOCGPTPEER" cd5 "
	$BIN/fsprobe ok own-pty path
	$BIN/fsprobe ok own-pty peer
	$BIN/fsprobe ok own-pty path"
kill "$holder" 2>/dev/null

# --- modes: audit (would_deny) and record_allowed ---------------------------
mkdir -p /srv/cdeny && echo denied > /srv/cdeny/file
cat > "$T/audit-mode.yaml" <<EOT
sandbox:
  # the suites were written for root: uid 0, still without capabilities
  identity: {uid: 0, gid: 0}
  mode: audit
  filesystem:
    root: read_only
    workspace:
      path: $WS
    deny: [/srv/cdeny/**]
  acknowledge_unenforced: [filesystem.exec, network_egress.default]
EOT
ENV=$T/audit-mode.yaml
in_run cm1 ok read /srv/cdeny/file
cm1=$(record cm1 open_read /srv/cdeny/file read would_deny EACCES "$(ruled /srv/cdeny)")
[ "$RC" -eq 0 ] && expect_re "$T/cm1.audit" "$cm1" &&
	pass "mode: audit: a denied file is read, recorded as would_deny" ||
	fail "mode: audit read" "exit $RC"
# What protects the node, tether and other runs is not on trial.
in_run cm4 EACCES read /etc/shadow
cm4=$(record cm4 open_read /etc/shadow read deny EACCES "$(protected /etc/shadow)")
[ "$RC" -eq 0 ] && expect_re "$T/cm4.audit" "$cm4" &&
	pass "mode: audit: a protected path stays denied" || fail "mode: audit protected" "exit $RC"
pin=$(ls -d /sys/fs/bpf/tether/*/link_tether_file_open | head -n 1)
in_run cm5 EACCES unlink "$pin"
[ "$RC" -eq 0 ] && [ -e "$pin" ] && normalize "$T/cm5.audit" | grep -q '"op":"unlink",.*"decision":"deny"' &&
	pass "mode: audit: tether's pinned programs cannot be unpinned" || fail "mode: audit pin" "exit $RC"
in_run cm6 EACCES append /proc/sys/kernel/hostname
[ "$RC" -eq 0 ] && normalize "$T/cm6.audit" | grep -q '"op":"open_write","path":"/proc/sys/kernel/hostname","access":"write","decision":"deny"' &&
	pass "mode: audit: kernel interfaces (/proc, /sys, /dev) stay unwritable" ||
	fail "mode: audit sysctl" "exit $RC"
in_run cm2 ok exec "$WS/fsprobe" ok nop
cm2=$(record cm2 exec "$WS/fsprobe" exec would_deny EACCES "$(ruled "$WS")")
[ "$RC" -eq 0 ] && expect_re "$T/cm2.audit" "$cm2" &&
	pass "mode: audit: a workspace binary runs, recorded as would_deny" ||
	fail "mode: audit exec" "exit $RC"

cat > "$T/allowed.yaml" <<EOT
sandbox:
  # the suites were written for root: uid 0, still without capabilities
  identity: {uid: 0, gid: 0}
  filesystem:
    root: read_only
    workspace:
      path: $WS
  audit:
    record_allowed: true
  acknowledge_unenforced: [filesystem.exec, network_egress.default]
EOT
ENV=$T/allowed.yaml
in_run cm3 ok exec "$BIN/fsprobe" ok nop
cm3="{\"seq\":@SEQ@,\"run_id\":\"cm3\",\"kind\":\"fs\",\"op\":\"exec\",\"path\":\"$BIN/fsprobe\",\"access\":\"exec\",\"decision\":\"allow\",$(ruled /opt),\"uid\":0,\"comm\":\"fsprobe\",\"exe\":\"$BIN/fsprobe\"}"
[ "$RC" -eq 0 ] && expect_re "$T/cm3.audit" "$cm3" && no_denials "$T/cm3.audit" &&
	pass "audit.record_allowed: an allowed exec is recorded (decision allow)" ||
	fail "record_allowed exec" "exit $RC"
ENV=$T/confine.yaml

# --- processes outside the run are untouched while it is live --------------
rm -f "$WS/started" "$WS/stop"
tether run --envelope "$ENV" --run-id clive --audit "$T/clive.audit" -- /bin/sh -c \
	"touch $WS/started; while [ ! -e $WS/stop ]; do sleep 0.05; done" &
bg=$!
i=0
while [ ! -e "$WS/started" ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i + 1)); done
if [ -e "$WS/started" ] && "$BIN/fsprobe" ok read /etc/shadow &&
	"$BIN/fsprobe" ok readdir /root && "$BIN/fsprobe" ok exec "$WS/fsprobe" ok nop &&
	"$BIN/fsprobe" ok mmap-exec "$WS/blob" && ! grep -q '"comm":"fsprobe"' "$T/clive.audit"; then
	pass "the same binary outside the run reads /etc/shadow and runs the workspace copy while the run is live"
else
	fail "outside process untouched" "a host read or exec failed or was recorded"
	cat "$T/clive.audit"
fi
touch "$WS/stop"
wait $bg

finish
