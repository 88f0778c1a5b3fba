#!/bin/sh
# The real-toolchain suite, part 1: everyday agent commands that must work,
# each one `tether run` (cases/*.sh) under an envelope with a read-only
# root, a writable workspace, no network and uid 1000, with no denial in
# its stream.  Runs in the guest as root: tests/vm/run-toolchain.
. /opt/tether-tests/toolchain/lib.sh

# --- git ------------------------------------------------------------------------
env_for git
works "git: init, commit, branch, status, diff, merge, gc" git "$ENV" "
	grep -qx ' M a.txt' $WS/status-dirty.txt
	grep -q '1 file changed, 1 insertion' $WS/diffstat.txt
	grep -qx a.txt $WS/changed.txt
	grep -q feature $WS/branches.txt
	test \$(wc -l <$WS/log.txt) -eq 2
	test ! -s $WS/status-clean.txt" git "$WS"

# The input: a bare repository of root's, read-only for the run by its rule
# and by its modes.  git refuses a repository of another owner unless told
# (safe.directory, which tether writes into the run's HOME/.gitconfig); it
# tries to hard-link the objects first, which fs.protected_hardlinks refuses
# before tether is asked, and copies them.  (An input of the run's own uid
# gets the link refused by tether, with a record: attacks.sh.)
make_input_repo 0
env_for git-clone "" "    inputs:
      - {path: $INPUT/upstream.git}"
works "git: clone of a read-only input repository, commit on the clone" git-clone "$ENV" "
	test \$(wc -l <$WS/log.txt) -eq 2
	grep -q 'ahead 1' $WS/branch.txt
	grep -q '1 file changed' $WS/diffstat.txt
	test \"\$(upstream_rev main)\" = $UPSTREAM_HEAD" git-clone "$WS" "$INPUT/upstream.git"

# The same repository as an input verified by digest: the run reads the
# controller's copy, the run's uid's, on a read-only mount of its own (so
# git's hard links fail with EXDEV, before tether is asked, and it copies).
make_input_repo 0
input_digest=$(tether check --digest "$INPUT/upstream.git" | cut -d' ' -f1)
env_for git-clone-verified "" "    inputs:
      - {path: $INPUT/upstream.git, digest: \"$input_digest\"}"
works "git: clone of an input repository verified by digest (no safe.directory needed)" \
	git-clone-verified "$ENV" "
	test \$(wc -l <$WS/log.txt) -eq 2
	grep -q 'ahead 1' $WS/branch.txt
	test \"\$(upstream_rev main)\" = $UPSTREAM_HEAD" git-clone "$WS" "$INPUT/upstream.git"

env_for git-hook "$WS_EXEC"
works "git: pre-commit and commit-msg hooks (workspace executable)" git-hook "$ENV" "
	test \"\$(cat $WS/hooks.log)\" = 'pre-commit ran
commit-msg ran
pre-commit ran'
	test \$(wc -l <$WS/log.txt) -eq 1" git-hook "$WS"

# A fresh_overlay workspace from a git repository at a pinned commit: the
# controller has git clone the repository (as the run's uid, in the run's
# mount namespace) onto the run's own file system and check the commit out;
# the workspace is an overlay of that, the run's commits land in its upper
# layer, and the source repository (root's, with a later commit and an
# uncommitted change) is left as it was.
SRCREPO=$INPUT/web-app
rm -rf "$SRCREPO"
git init -q -b main "$SRCREPO"
mkdir -p "$SRCREPO/a"
echo "pinned readme" >"$SRCREPO/README"
echo b >"$SRCREPO/a/b.txt"
git -C "$SRCREPO" add -A
git -C "$SRCREPO" -c user.name=Root -c user.email=root@example.org commit -q -m pinned
PINNED=$(git -C "$SRCREPO" rev-parse HEAD)
PINNED_TREE=$(git -C "$SRCREPO" rev-parse 'HEAD^{tree}')
echo "later readme" >"$SRCREPO/README"
echo later >"$SRCREPO/later.txt"
git -C "$SRCREPO" add -A
git -C "$SRCREPO" -c user.name=Root -c user.email=root@example.org commit -q -m later
echo uncommitted >>"$SRCREPO/README"
SRC_DIGEST=$(tether check --digest "$SRCREPO" | cut -d' ' -f1)
# ov_envelope ID REF: a fresh_overlay envelope over $SRCREPO at REF; sets WS and ENV
ov_envelope() {
	WS=$WSROOT/$1 ENV=$T/$1.yaml
	cat >"$ENV" <<EOT
sandbox:
  identity: {uid: 1000, gid: 1000}
  workspace_lifetime: one_run
  filesystem:
    root: read_only
    workspace: {path: $WS, mode: fresh_overlay, source: $SRCREPO, ref: $2}
  resources:
    wall_clock: 10m
EOT
}
ov_envelope git-overlay "$PINNED"
# ov_check DESCRIPTION COMMAND...: one line of the check, saying which failed
ov_check() {
	what=$1
	shift
	"$@" || { echo "not so: $what" >&2; return 1; }
}
works "git: a fresh_overlay workspace of a repository at a pinned commit; the run commits; the source is unchanged" \
	git-overlay "$ENV" "
	ov_check 'HEAD is the pinned commit' test \"\$(sed -n 1p $T/git-overlay.out)\" = $PINNED
	ov_check 'git status is clean' test \"\$(sed -n 2p $T/git-overlay.out)\" = 0
	ov_check 'the pinned README' grep -qx 'pinned readme' $T/git-overlay.out
	ov_check 'no file of the later commit' grep -qx no-later $T/git-overlay.out
	ov_check 'files owned by the run' grep -qx 'owner 1000' $T/git-overlay.out
	ov_check 'the run committed' test \"\$(tail -n 1 $T/git-overlay.out)\" = 2
	ov_check 'the start record has the commit and tree' grep -qF '\"source_commit\":\"$PINNED\",\"source_tree\":\"$PINNED_TREE\"' $T/git-overlay.audit
	ov_check 'the source is unchanged' test \"\$(tether check --digest $SRCREPO | cut -d' ' -f1)\" = $SRC_DIGEST
	ov_check 'nothing left at the workspace' test ! -e $WS" git-overlay "$WS"

# A commit the repository does not have, and a tag object's id instead of a
# commit's, refuse the run (exit 120) with the reason; nothing ran.
git -C "$SRCREPO" -c user.name=Root -c user.email=root@example.org tag -a -m v1 v1 "$PINNED"
TAG_OBJECT=$(git -C "$SRCREPO" rev-parse v1)
ov_envelope git-overlay-missing 0123456789abcdef0123456789abcdef01234567
tc_run git-overlay-missing "$ENV" git-overlay "$WS"
missing_rc=$RC
ov_envelope git-overlay-tag "$TAG_OBJECT"
tc_run git-overlay-tag "$ENV" git-overlay "$WS"
if [ "$missing_rc" -eq 120 ] && [ "$RC" -eq 120 ] &&
	grep -q "the workspace's source $SRCREPO has no commit 0123456789abcdef" "$T/git-overlay-missing.out" &&
	grep -q "is not a commit (it names commit $PINNED" "$T/git-overlay-tag.out" &&
	! grep -q "pinned readme" "$T/git-overlay-missing.out" "$T/git-overlay-tag.out"; then
	pass "a fresh_overlay ref the repository lacks, or a tag object's id, refuses the run (exit 120) with the reason"
else
	fail "fresh_overlay bad ref" "exits $missing_rc, $RC"
	show_run git-overlay-missing
	show_run git-overlay-tag
fi

# --- python3 --------------------------------------------------------------------
env_for python-pip
works "python3: venv, pip install of a local wheel and sdist (--no-index)" python-pip "$ENV" "
	grep -q '^tinywheel  *1.0' $WS/pip-list.txt
	grep -q '^tinysdist  *1.0' $WS/pip-list.txt
	ls $WS/venv/lib/python3*/site-packages/tinysdist/__init__.py" python-pip "$WS" "$DIST"

env_for pytest
works "python3: pytest (tmp_path, monkeypatch, capsys)" pytest "$ENV" "
	grep -q '3 passed' $WS/pytest.out" pytest "$WS"

env_for python-mp
works "python3: multiprocessing Pool, Queue, Lock and ProcessPoolExecutor" python-mp "$ENV" "
	grep -qx 'multiprocessing ok' $T/python-mp.out" python-mp "$WS"

env_for python-stdlib
works "python3: tempfile, sqlite3 (WAL), ctypes with a callback" python-stdlib "$ENV" "
	grep -qx 'stdlib ok' $T/python-stdlib.out
	test -s $WS/app.db" python-stdlib "$WS"

# --- C ----------------------------------------------------------------------------
env_for gcc-make "$WS_EXEC"
works "gcc and make: build and run in the workspace (workspace executable)" gcc-make "$ENV" "
	grep -qx 'twice 21 is 42' $WS/hello.out" gcc-make "$WS"

env_for configure "$WS_EXEC"
works "./configure (runs conftest), make, run (workspace executable)" configure "$ENV" "
	grep -q 'checking whether the C compiler works... yes' $WS/configure.out
	grep -qx 'configured, unistd 1' $WS/app.out" configure "$WS"

env_for tmpdir-exec "$EXEC_KW_SYSTEM, $EXEC_KW_TMP"
works "a program built into TMPDIR and run from there (exec: [$EXEC_KW_SYSTEM, $EXEC_KW_TMP])" tmpdir-exec "$ENV" "
	grep -qx 'ran from TMPDIR' $WS/prog.out" tmpdir-exec "$WS"

# --- node -------------------------------------------------------------------------
env_for npm
works "node and npm: npm test of a local package" npm "$ENV" "
	grep -q 'npm test ok' $WS/npm.out" npm "$WS"

# --- network: loopback within the run ----------------------------------------
env_for loopback
works "loopback: python3 -m http.server on 127.0.0.1:8000 and curl, in one run, no rule" loopback "$ENV" "
	grep -qx hello-loopback $WS/got.txt" loopback "$WS"

# --- shell tools --------------------------------------------------------------------
env_for pipelines
works "shell pipelines: seq awk sort uniq find xargs grep tee cut tr paste comm" pipelines "$ENV" "
	test \"\$(cat $WS/top.txt | tr -s ' ' | sed 's/^ //')\" = '1031 1
1031 2
1031 3'
	test \"\$(cat $WS/found.txt)\" = 'tree/a/b/deep.txt
tree/c/other.txt'
	test \"\$(cat $WS/cut.txt)\" = '1,2,3,'
	grep -qx 'tree/a/b/deep.txt:tree/a/b/deep.txt' $WS/paste.txt
	grep -qx 'a 1' $WS/comm.txt" pipelines "$WS"

env_for tar
works "tar: czf, tzf, xzf, and through a pipe" tar "$ENV" "
	test \"\$(cat $WS/list.txt)\" = 'src/
src/a
src/link
src/sub/
src/sub/b'" tar "$WS"

env_for sed-i
works "sed -i, with and without a backup suffix" sed-i "$ENV" "
	test \"\$(cat $WS/f.txt)\" = 'alpha
BETA'
	test \"\$(cat $WS/f.txt.orig)\" = 'alpha
BETA
gamma'
	test \"\$(ls $WS)\" = 'f.txt
f.txt.orig'" sed-i "$WS"

env_for sort-tmpdir
works "sort spilling to temporary files in TMPDIR (-S 1M, 200000 lines)" sort-tmpdir "$ENV" "
	test \$(wc -l <$WS/sorted.txt) -eq 200000
	test \"\$(head -n 1 $WS/sorted.txt)\" = 1" sort-tmpdir "$WS"

env_for sort-tmp
works "sort -T /tmp (temporary files in /tmp by name)" sort-tmp "$ENV" "
	test \$(wc -l <$WS/sorted.txt) -eq 200000" sort-tmp "$WS"

env_for mktemp-tmp
works "mktemp /tmp/x.XXXXXX and mktemp -d /tmp/d.XXXXXX" mktemp-tmp "$ENV" "
	grep -qx f $WS/listing.txt
	! ls /tmp/x.* /tmp/d.* 2>/dev/null" mktemp-tmp "$WS" /tmp

env_for mktemp-vartmp
works "mktemp /var/tmp/x.XXXXXX and mktemp -d /var/tmp/d.XXXXXX" mktemp-vartmp "$ENV" "
	grep -qx f $WS/listing.txt
	! ls /var/tmp/x.* /var/tmp/d.* 2>/dev/null" mktemp-tmp "$WS" /var/tmp

env_for scratch-times
works "timestamps in /tmp, /var/tmp, /dev/shm, HOME: tar x, cp -p, touch -d" scratch-times "$ENV" "
	test \"\$(cat $WS/done.txt | wc -l)\" -eq 4" scratch-times "$WS"

env_for home
works "HOME: git config --global and a cache work, outside the workspace" home "$ENV" "
	test \"\$(ls -A $WS)\" = 'home.txt
proj'" home "$WS"

env_for keys
works "ssh-keygen and openssl: key pair, self-signed certificate, digest" keys "$ENV" "
	grep -q '(ED25519)' $WS/fingerprint.txt
	grep -q 'CN *= *tether-test' $WS/subject.txt
	grep -q '= ' $WS/digest.txt" keys "$WS"

finish
