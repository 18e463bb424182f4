#!/bin/bash
# make install DESTDIR=...: the binary, man pages, completion, themes and the
# systemd units (systemd/*.service, their ExecStart pointing at the installed
# binary) go in place and systemd-analyze accepts the units; make uninstall
# takes them all away.
. "$(dirname "$0")/../lib.sh"
top=${LATOP_TOP:?}
[ -x "$top/latop" ] || skip_all "no built latop at $top/latop (make latop)"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
unitdir=/lib/systemd/system

# -o latop: install what is built, never rebuild it here.
make -s -C "$top" -o latop install DESTDIR="$tmp/root" PREFIX=/usr SYSTEMD_UNITDIR=$unitdir >"$tmp/install.out" 2>&1
ok $? "make install DESTDIR PREFIX=/usr SYSTEMD_UNITDIR=$unitdir ($(head -c 300 "$tmp/install.out"))"
for f in usr/bin/latop usr/share/man/man1/latop.1 usr/share/bash-completion/completions/latop \
	"${unitdir#/}/latop-record.service" "${unitdir#/}/latop-serve.service"; do
	[ -f "$tmp/root/$f" ] || missing+=" $f"
done
[ -z "$missing" ]; ok $? "the binary, man page, completion and both units are installed${missing:+ (missing:$missing)}"
grep -qx 'ExecStart=/usr/bin/latop record -o /var/lib/latop --rotate 1h --keep 24h --quiet' "$tmp/root$unitdir/latop-record.service" &&
	grep -qx 'ExecStart=/usr/bin/latop serve' "$tmp/root$unitdir/latop-serve.service" &&
	grep -qx 'StateDirectory=latop' "$tmp/root$unitdir/latop-record.service" &&
	grep -qx 'Restart=on-failure' "$tmp/root$unitdir/latop-record.service" &&
	! grep -q @BINDIR@ "$tmp/root$unitdir"/*.service
ok $? "the units run the installed binary: a ring in /var/lib/latop (StateDirectory), restarted on failure"
[ "$(stat -c %a "$tmp/root$unitdir/latop-record.service")" = 644 ]; ok $? "units are mode 0644"

if command -v systemd-analyze >/dev/null; then
	# verify checks that ExecStart is executable: point it at the built binary.
	mkdir "$tmp/units"
	for u in "$tmp/root$unitdir"/*.service; do
		sed "s|/usr/bin/latop|$top/latop|" "$u" > "$tmp/units/$(basename "$u")"
	done
	out=$(SYSTEMD_LOG_LEVEL=notice systemd-analyze verify --man=no "$tmp/units"/*.service 2>&1); rc=$?
	[ $rc -eq 0 ] && [ -z "$out" ]; ok $? "systemd-analyze verify accepts both units (exit $rc: $out)"
else
	skip "systemd-analyze is not installed: the units are not verified"
fi

make -s -C "$top" uninstall DESTDIR="$tmp/root" PREFIX=/usr SYSTEMD_UNITDIR=$unitdir >/dev/null 2>&1
left=$(find "$tmp/root" -type f)
[ -z "$left" ]; ok $? "make uninstall removes every file it installed${left:+ (left: $left)}"
done_testing
