# A program built into $TMPDIR and run from there (go run, go test, test
# harnesses), where the envelope grants exec on the run's temporary
# directory.  $1: the workspace.
cd "$1"
printf '#include <stdio.h>\nint main(void) { puts("ran from TMPDIR"); return 0; }\n' >prog.c
cc -o "$TMPDIR/prog" prog.c
"$TMPDIR/prog" >prog.out
