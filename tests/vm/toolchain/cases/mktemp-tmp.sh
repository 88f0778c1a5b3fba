# mktemp /tmp/x.XXXX and mktemp -d: /tmp written by name, not $TMPDIR.
# $1: the workspace, $2: the directory (/tmp or /var/tmp).
cd "$1"
f=$(mktemp "$2/x.XXXXXX")
echo data >"$f"
[ "$(cat "$f")" = data ]
d=$(mktemp -d "$2/d.XXXXXX")
echo inner >"$d/f"
ls "$d" >listing.txt
rm -r "$f" "$d"
