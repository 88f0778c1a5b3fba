# Timestamps on the run's scratch space: tar keeps an archive's mtimes when
# it extracts into /tmp, cp -p and touch -d set them in /tmp, /var/tmp,
# /dev/shm and HOME (what pip's sdist unpacking does in TMPDIR).  Every
# place is tried; the run fails at the end if any did.  $1: the workspace.
cd "$1"
mkdir -p src
echo a >src/a
touch -d '2001-02-03 04:05:06' src/a
tar czf src.tgz src
want=$(stat -c %Y src/a)
bad=
if tar xzf src.tgz -C /tmp && [ "$(stat -c %Y /tmp/src/a)" = "$want" ]; then :; else bad="$bad tar-x-/tmp"; fi
for d in /tmp /var/tmp /dev/shm "$HOME"; do
	if cp -p src/a "$d/copy" && [ "$(stat -c %Y "$d/copy")" = "$want" ] &&
		touch -d '2002-03-04 05:06:07' "$d/copy"; then
		echo "$d" >>done.txt
	else
		bad="$bad $d"
	fi
done
[ -z "$bad" ] || { echo "failed:$bad"; exit 1; }
