# sed -i (a temporary file next to the edited one, renamed over it), with and
# without a backup suffix.  $1: the workspace.
cd "$1"
printf 'alpha\nbeta\ngamma\n' >f.txt
sed -i 's/beta/BETA/' f.txt
sed -i.orig -e '/gamma/d' f.txt
