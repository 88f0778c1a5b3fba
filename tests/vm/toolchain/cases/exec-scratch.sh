# Attack: execute a program, and map a library executable, from $TMPDIR,
# /tmp, /var/tmp and /dev/shm, where the envelope grants no exec.  Copies of
# /usr/bin/true and a small shared library; what ran goes to "ran".
# $1: the workspace.
cd "$1"
echo "$TMPDIR" >tmpdir.txt
printf 'int tc_value(void) { return 42; }\n' >lib.c
cc -shared -fPIC -o lib.so lib.c
dirs="/tmp /var/tmp /dev/shm"
case " $dirs " in *" $TMPDIR "*) ;; *) dirs="$TMPDIR $dirs" ;; esac
for d in $dirs; do
	if cp /usr/bin/true "$d/tc-true" 2>/dev/null && cp lib.so "$d/tc-lib.so" 2>/dev/null; then
		echo "$d" >>made
		"$d/tc-true" 2>/dev/null && echo "exec $d/tc-true" >>ran || true
		python3 -c "import ctypes, sys; sys.exit(0 if ctypes.CDLL(sys.argv[1]).tc_value() == 42 else 1)" \
			"$d/tc-lib.so" 2>/dev/null && echo "mmap $d/tc-lib.so" >>ran || true
	fi
done
exit 0
