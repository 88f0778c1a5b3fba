# ssh-keygen and openssl: a key pair, a self-signed certificate, a digest.
# $1: the workspace.
cd "$1"
ssh-keygen -q -t ed25519 -N '' -C agent@tc -f id_ed25519
ssh-keygen -l -f id_ed25519.pub >fingerprint.txt
openssl genpkey -algorithm ed25519 -out key.pem
openssl req -new -x509 -key key.pem -subj /CN=tether-test -days 1 -out cert.pem
openssl x509 -in cert.pem -noout -subject >subject.txt
echo data | openssl dgst -sha256 >digest.txt
