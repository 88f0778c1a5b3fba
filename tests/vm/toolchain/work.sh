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
