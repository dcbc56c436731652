# Sourced by scripts/build-packages.sh and scripts/check-packages.sh: a minimal Debian root per
# suite (debootstrap minbase, from the archive this machine's apt sources name), made once and
# reused, entered with /proc and /dev bound and an empty environment.
# Sets: root (the root's path); defines: make_root SUITE ROOT, enter_root, in_root COMMAND...

# Debian 12 is this machine's; Debian 13 the other release the project supports.
suite_for() {
	case $1 in
	12 | bookworm) echo bookworm ;;
	13 | trixie) echo trixie ;;
	*)
		echo "package-root: unknown Debian release '$1' (12 or 13)" >&2
		return 1
		;;
	esac
}

make_root() { # SUITE ROOT
	root=$2
	[ -f "$root/.gpuhandle-ready" ] && return 0
	command -v debootstrap >/dev/null ||
		DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends debootstrap
	# Never remove through a mount of the machine's /dev or /proc left by a run cut short.
	if findmnt -rn -o TARGET | grep -q "^$root/"; then
		echo "package-root: $root still has mounts (findmnt | grep $root); unmount them first" >&2
		return 1
	fi
	local archive
	archive=$(scripts/debian-archive.sh)
	rm -rf --one-file-system "$root"
	mkdir -p "$root"
	echo "package-root: making a Debian $1 root in $root from $archive"
	debootstrap --variant=minbase "$1" "$root" "$archive" >"$root.debootstrap.log" 2>&1 || {
		tail -20 "$root.debootstrap.log"
		return 1
	}
	echo "deb $archive $1 main" >"$root/etc/apt/sources.list"
	touch "$root/.gpuhandle-ready"
}

root_mounts=()
leave_root() {
	local i
	for ((i = ${#root_mounts[@]} - 1; i >= 0; i--)); do
		umount -l "${root_mounts[i]}" 2>/dev/null || true
	done
	root_mounts=()
}

enter_root() {
	local dir
	for dir in proc dev dev/pts; do # apt logs through a pty
		mount --bind "/$dir" "$root/$dir"
		root_mounts+=("$root/$dir")
	done
	cp /etc/resolv.conf "$root/etc/resolv.conf"
}

in_root() {
	chroot "$root" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 \
		DEBIAN_FRONTEND=noninteractive "$@"
}
