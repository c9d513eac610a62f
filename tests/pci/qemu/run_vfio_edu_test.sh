#!/usr/bin/env bash
# Boots a QEMU guest (q35, intel-iommu with interrupt remapping, one edu device) on Debian's kernel, with an
# initramfs holding busybox, the vfio modules and GUEST_TEST (tests/pci/qemu/vfio_edu_guest_test.cc) with its
# shared libraries; runs the test at three moments (vfio-pci not loaded, edu not bound, edu bound to vfio-pci) and
# reads the results from the serial console. Exit 0 pass, 1 fail, 77 skip (QEMU or the kernel unavailable).
#
# usage: run_vfio_edu_test.sh GUEST_TEST [TRANSCRIPT]     (TRANSCRIPT: where to keep the console log)
set -uo pipefail

guest_test=${1:?usage: run_vfio_edu_test.sh GUEST_TEST [TRANSCRIPT]}
transcript=${2:-}
skip() { echo "SKIP: $*"; exit 77; }

qemu=$(command -v qemu-system-x86_64) || skip "qemu-system-x86_64 is not installed (Debian package qemu-system-x86)"
[ -x /bin/busybox ] || skip "/bin/busybox is missing (Debian package busybox-static)"
kernel_version=""
for dir in /lib/modules/*; do
  version=${dir##*/}
  if [ -r "/boot/vmlinuz-$version" ] && [ -f "$dir/kernel/drivers/vfio/pci/vfio-pci.ko" ]; then
    kernel_version=$version
  fi
done
[ -n "$kernel_version" ] || skip "no readable Debian kernel with the vfio-pci module (package linux-image-amd64)"
modules=/lib/modules/$kernel_version/kernel
# Load order follows the module dependencies (modules.dep).
module_files=(virt/lib/irqbypass.ko drivers/vfio/vfio.ko drivers/vfio/vfio_virqfd.ko
              drivers/vfio/vfio_iommu_type1.ko drivers/vfio/pci/vfio-pci-core.ko drivers/vfio/pci/vfio-pci.ko)

work=$(mktemp -d /tmp/baregpu-qemu-XXXXXX)
trap 'rm -rf "$work"' EXIT
root=$work/root
mkdir -p "$root"/{bin,dev,proc,sys,tmp,modules}
cp /bin/busybox "$root/bin/busybox"
for m in "${module_files[@]}"; do
  [ -f "$modules/$m" ] || skip "module $m is not part of kernel $kernel_version (built in or missing)"
  cp "$modules/$m" "$root/modules/"
done

# The test binary and every shared library it loads, at the same absolute paths (its rpath then resolves).
guest_test=$(readlink -f "$guest_test")
copy_mirrored() { mkdir -p "$root$(dirname "$1")" && cp -L "$1" "$root$1"; }
copy_mirrored "$guest_test"
while read -r lib; do copy_mirrored "$lib"; done < <(ldd "$guest_test" | awk '/=> \// {print $3} /^\t\/.*ld-linux/ {print $1}')

cat > "$root/init" <<INIT
#!/bin/busybox sh
/bin/busybox --install -s /bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
echo "BAREGPU-QEMU: guest kernel \$(uname -r)"
edu=""
for d in /sys/bus/pci/devices/*; do
  if [ "\$(cat \$d/vendor)" = 0x1234 ] && [ "\$(cat \$d/device)" = 0x11e8 ]; then edu=\${d##*/}; fi
done
echo "BAREGPU-QEMU: edu at \$edu, IOMMU group \$(basename \$(readlink /sys/bus/pci/devices/\$edu/iommu_group))"
export BAREGPU_EDU_ADDRESS=\$edu
run_stage() {
  $guest_test --gtest_filter="\$2" --gtest_color=no
  echo "BAREGPU-QEMU-STAGE \$1 rc=\$?"
}
run_stage not-loaded 'VfioNotLoaded.*'
for m in ${module_files[*]##*/}; do insmod /modules/\$m || echo "BAREGPU-QEMU: insmod \$m failed"; done
run_stage not-bound 'VfioNotBound.*'
echo 1234 11e8 > /sys/bus/pci/drivers/vfio-pci/new_id
echo "BAREGPU-QEMU: edu driver \$(basename \$(readlink /sys/bus/pci/devices/\$edu/driver))"
run_stage bound 'VfioEduTest.*'
dmesg | grep -i 'DMAR' | grep -i 'fault' | sed 's/^/BAREGPU-QEMU-DMAR: /'
echo BAREGPU-QEMU-DONE
poweroff -f
INIT
chmod +x "$root/init"
(cd "$root" && find . | cpio -o -H newc --quiet | gzip -1) > "$work/initrd.gz"

console=$work/console.log
start=$(date +%s)
timeout 300 "$qemu" -M q35,kernel-irqchip=split -m 768 -smp 1 -display none -monitor none -no-reboot \
  -serial "file:$console" -device intel-iommu,intremap=on -device edu \
  -kernel "/boot/vmlinuz-$kernel_version" -initrd "$work/initrd.gz" \
  -append "console=ttyS0 intel_iommu=on panic=-1 quiet" < /dev/null
qemu_status=$?
elapsed=$(( $(date +%s) - start ))
[ -n "$transcript" ] && cp "$console" "$transcript"

# The transcript: every check and its result.
grep -aE 'BAREGPU-QEMU|^\[ *(RUN|OK|FAILED|PASSED|SKIPPED) *\]|diagnostic:|unmapped IOVA|Failure|Expected|Which is|error' \
  "$console" | tr -d '\r'
echo "qemu exited with $qemu_status after ${elapsed}s (kernel $kernel_version, TCG)"

fail() { echo "FAIL: $*"; exit 1; }
[ "$qemu_status" = 0 ] || fail "QEMU did not power off cleanly (status $qemu_status; 124 means the 300 s timeout)"
grep -aq BAREGPU-QEMU-DONE "$console" || fail "the guest did not finish its script"
for stage in not-loaded not-bound bound; do
  grep -aq "BAREGPU-QEMU-STAGE $stage rc=0" "$console" || fail "stage '$stage' failed"
done
unmapped=$(grep -a 'unmapped IOVA used:' "$console" | tr -d '\r' | awk '{print $NF}')
[ -n "$unmapped" ] || fail "the unmapped-IOVA check did not run"
grep -a 'BAREGPU-QEMU-DMAR' "$console" | grep -aqi "fault addr $unmapped" ||
  fail "the IOMMU reported no DMA fault at the unmapped IOVA $unmapped"
echo "PASS: VFIO against vfio-pci, intel-iommu and QEMU's edu, including the IOMMU fault at $unmapped"
