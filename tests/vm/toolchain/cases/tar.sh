# tar: create, list and extract a gzip'ed archive, and tar through a pipe.
# $1: the workspace.
cd "$1"
mkdir -p src/sub
echo a >src/a
echo b >src/sub/b
ln -s a src/link
chmod 0750 src/sub
tar czf src.tgz src
tar tzf src.tgz | sort >list.txt
mkdir out
tar xzf src.tgz -C out
diff -r src out/src
tar cf - src | (cd out && tar xf - --transform 's/^src/copy/')
diff -r src out/copy
[ "$(readlink out/copy/link)" = a ]
