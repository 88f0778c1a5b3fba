# gcc and make: a two-file program built by a Makefile and run from the
# workspace.  $1: the workspace.
cd "$1"
mkdir -p proj
cd proj
cat >util.h <<'C'
int twice(int);
C
cat >util.c <<'C'
#include "util.h"
int twice(int x) { return 2 * x; }
C
cat >main.c <<'C'
#include <stdio.h>
#include "util.h"
int main(void) { printf("twice 21 is %d\n", twice(21)); return 0; }
C
printf 'CFLAGS = -O2 -Wall\nhello: main.o util.o\n\t$(CC) -o $@ main.o util.o\nmain.o util.o: util.h\nclean:\n\trm -f hello *.o\n' >Makefile
make -s
./hello >../hello.out
make -s clean
test ! -e hello
