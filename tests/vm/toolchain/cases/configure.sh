# A ./configure in the autoconf manner (compiles and runs conftest, writes
# config.h and a Makefile through $TMPDIR), then make and run.
# $1: the workspace.
cd "$1"
mkdir -p proj
cd proj
cat >configure <<'SH'
#!/bin/sh
CC=${CC:-cc}
printf 'checking whether the C compiler works... '
printf 'int main(void) { return 0; }\n' >conftest.c
if $CC -o conftest conftest.c >config.log 2>&1 && ./conftest; then echo yes; else echo no; exit 1; fi
printf 'checking for unistd.h... '
printf '#include <unistd.h>\nint main(void) { return 0; }\n' >conftest.c
if $CC -c conftest.c -o conftest.o >>config.log 2>&1; then have=1; echo yes; else have=0; echo no; fi
rm -f conftest conftest.c conftest.o
tmp=${TMPDIR-/tmp}/cs$$
mkdir "$tmp"
sed -e "s|@CC@|$CC|g" Makefile.in >"$tmp/Makefile"
printf '#define HAVE_UNISTD_H %s\n' "$have" >"$tmp/config.h"
mv "$tmp/Makefile" "$tmp/config.h" .
rmdir "$tmp"
echo "config.status: creating Makefile"
SH
chmod +x configure
cat >main.c <<'C'
#include <stdio.h>
#include "config.h"
int main(void) { printf("configured, unistd %d\n", HAVE_UNISTD_H); return 0; }
C
printf 'CC = @CC@\napp: main.c config.h\n\t$(CC) -o $@ main.c\n' >Makefile.in
./configure >../configure.out
make -s
./app >../app.out
