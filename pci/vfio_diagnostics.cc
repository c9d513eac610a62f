#include "pci/vfio_diagnostics.h"

#include <grp.h>
#include <pwd.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "base/file.h"
#include "base/status_macros.h"
#include "pci/enumerate.h"
#include "pci/sysfs_tree.h"

namespace pci {
namespace {

constexpr absl::string_view kVfioDriver = "vfio-pci";

std::string UserName(uid_t uid) {
  struct passwd entry, *found = nullptr;
  char buffer[1024];
  if (getpwuid_r(uid, &entry, buffer, sizeof(buffer), &found) == 0 && found != nullptr) return found->pw_name;
  return absl::StrCat("uid ", uid);
}

std::string GroupName(gid_t gid) {
  struct group entry, *found = nullptr;
  char buffer[1024];
  if (getgrgid_r(gid, &entry, buffer, sizeof(buffer), &found) == 0 && found != nullptr) return found->gr_name;
  return absl::StrCat("gid ", gid);
}

// The commands that move `address` from its current driver (if any) to vfio-pci.
std::string BindCommands(const SystemPaths& paths, const Address& address, bool bound) {
  const std::string bdf = address.ToString();
  const std::string dir = paths.PciDevice(address);
  std::string commands;
  if (bound) commands = absl::StrFormat("echo %s > %s/driver/unbind; ", bdf, dir);
  return absl::StrCat(commands, absl::StrFormat("echo %s > %s/driver_override; echo %s > %s/bus/pci/drivers_probe",
                                                kVfioDriver, dir, bdf, paths.sys));
}

// Base class names of include/linux/pci_ids.h (PCI_BASE_CLASS_*), for saying what a device is instead.
std::string BaseClassName(uint8_t base_class) {
  switch (base_class) {
    case 0x01:
      return "a storage controller";
    case 0x02:
      return "a network controller";
    case 0x03:
      return "a display controller";
    case 0x04:
      return "a multimedia device";
    case 0x05:
      return "a memory controller";
    case 0x06:
      return "a bridge";
    case 0x0c:
      return "a serial bus controller (USB, SMBus, ...)";
    default:
      return absl::StrFormat("a device of PCI base class %#04x", base_class);
  }
}

bool IsGpuDriver(absl::string_view driver) {
  return driver == "amdgpu" || driver == "radeon" || driver == "nvidia" || driver == "nouveau";
}

absl::Status CheckDriver(const SystemPaths& paths, const Address& address, const std::optional<std::string>& driver) {
  const std::string bdf = address.ToString();
  if (!driver.has_value()) {
    return absl::FailedPreconditionError(absl::StrFormat("%s is bound to no driver; bind it to vfio-pci (as root): %s",
                                                         bdf, BindCommands(paths, address, false)));
  }
  if (DriverKeepsGroupViable(*driver) && absl::StrContains(*driver, "vfio")) return absl::OkStatus();
  return absl::FailedPreconditionError(absl::StrFormat(
      "%s is bound to %s, not vfio-pci; %shand it to vfio-pci (as root): %s", bdf, *driver,
      IsGpuDriver(*driver) ? "stop everything using the GPU (display manager, compute jobs, nvidia-persistenced), then "
                           : "",
      BindCommands(paths, address, true)));
}

absl::Status CheckGroupViable(const SystemPaths& paths, const Address& address, const std::string& group) {
  SysfsPciFunction function(paths, address);
  BAREGPU_ASSIGN_OR_RETURN(std::vector<Address> members, function.IommuGroupMembers(group));
  std::vector<std::string> blockers, fixes;
  for (const Address& member : members) {
    if (member == address) continue;
    BAREGPU_ASSIGN_OR_RETURN(std::optional<std::string> driver, SysfsPciFunction(paths, member).Driver());
    if (!driver.has_value() || DriverKeepsGroupViable(*driver)) continue;
    blockers.push_back(absl::StrFormat("%s (bound to %s)", member.ToString(), *driver));
    fixes.push_back(BindCommands(paths, member, true));
  }
  if (blockers.empty()) return absl::OkStatus();
  return absl::FailedPreconditionError(absl::StrFormat(
      "IOMMU group %s of %s is not viable: it also holds %s, and VFIO takes a group only when no other kernel "
      "driver uses any of its devices; hand them to vfio-pci too (as root): %s; or move the GPU to a slot with its "
      "own IOMMU group",
      group, address.ToString(), absl::StrJoin(blockers, ", "), absl::StrJoin(fixes, "; ")));
}

}  // namespace

absl::Status CheckIsGpu(const Address& address, const SystemPaths& paths) {
  SysfsPciFunction function(paths, address);
  BAREGPU_ASSIGN_OR_RETURN(uint16_t vendor, function.VendorId());
  BAREGPU_ASSIGN_OR_RETURN(uint32_t class_code, function.ClassCode());
  constexpr int kBaseClassShift = 16;  // class is base class, subclass, programming interface: one byte each
  const uint8_t base_class = static_cast<uint8_t>(class_code >> kBaseClassShift);
  const bool gpu_vendor = vendor == kVendorAmd || vendor == kVendorNvidia;
  if (base_class == kPciBaseClassDisplay && gpu_vendor) return absl::OkStatus();
  // QEMU's edu device (hw/misc/edu.c: vendor 0x1234, device 0x11e8; pci/sim/edu_device.h models it) is the PCI
  // layer's test device (tests/pci/qemu): it gets the same guidance a GPU would.
  constexpr uint16_t kQemuEduVendor = 0x1234, kQemuEduDevice = 0x11e8;
  BAREGPU_ASSIGN_OR_RETURN(uint16_t device_id, function.DeviceId());
  if (vendor == kQemuEduVendor && device_id == kQemuEduDevice) return absl::OkStatus();
  // Someone deliberately handed it to vfio-pci (a test device in a VM, QEMU's edu): theirs to use.
  BAREGPU_ASSIGN_OR_RETURN(std::optional<std::string> driver, function.Driver());
  if (driver.has_value() && DriverKeepsGroupViable(*driver) && absl::StrContains(*driver, "vfio")) {
    return absl::OkStatus();
  }
  return absl::FailedPreconditionError(absl::StrFormat(
      "%s is %s (vendor %04x, class %06x%s), not an AMD or NVIDIA GPU: baregpu drives GPUs (PCI display "
      "controllers, class 0x03) only and leaves this device alone; `baregpu list` shows the GPUs",
      address.ToString(), BaseClassName(base_class), vendor, class_code,
      driver.has_value() ? absl::StrCat(", driven by ", *driver) : ""));
}

Credentials Credentials::Current() {
  Credentials who{geteuid(), getegid(), {}};
  int count = getgroups(0, nullptr);
  if (count > 0) {
    who.groups.resize(static_cast<size_t>(count));
    count = getgroups(count, who.groups.data());
    who.groups.resize(count > 0 ? static_cast<size_t>(count) : 0);
  }
  return who;
}

bool DriverKeepsGroupViable(absl::string_view driver) {
  // vfio-pci's variant drivers (e.g. mlx5_vfio_pci, nvgrace-gpu-vfio-pci) all carry "vfio" in their names.
  return absl::StrContains(driver, "vfio") || driver == "pci-stub" || driver == "pcieport";
}

absl::Status CheckNodeAccess(const std::string& node, const Credentials& who) {
  struct stat st;
  if (::stat(node.c_str(), &st) != 0) return base::ErrnoError(errno, absl::StrCat("stat ", node));
  if (who.uid == 0) return absl::OkStatus();  // CAP_DAC_OVERRIDE
  mode_t needed = S_IROTH | S_IWOTH;
  if (st.st_uid == who.uid) {
    needed = S_IRUSR | S_IWUSR;
  } else if (st.st_gid == who.gid || std::find(who.groups.begin(), who.groups.end(), st.st_gid) != who.groups.end()) {
    needed = S_IRGRP | S_IWGRP;
  }
  if ((st.st_mode & needed) == needed) return absl::OkStatus();
  const std::string user = UserName(who.uid);
  return absl::PermissionDeniedError(absl::StrFormat(
      "%s is owned by %s:%s with mode %04o, so %s (uid %d) cannot open it read-write (EACCES); for this boot: "
      "chown %s %s (as root); for good, a udev rule in /etc/udev/rules.d/99-vfio.rules: "
      "SUBSYSTEM==\"vfio\", OWNER=\"%s\" (or GROUP=\"vfio\", MODE=\"0660\" with %s in group vfio), then "
      "udevadm control --reload && udevadm trigger",
      node, UserName(st.st_uid), GroupName(st.st_gid), st.st_mode & 07777, user, who.uid, user, node, user, user));
}

absl::StatusOr<VfioTarget> CheckVfioPreconditions(const Address& address, const SystemPaths& paths,
                                                  const Credentials& who) {
  const std::string bdf = address.ToString();
  SysfsPciFunction function(paths, address);
  if (!function.Exists()) {
    return absl::NotFoundError(absl::StrFormat(
        "no PCI device %s (%s does not exist); `baregpu list` shows the GPUs, `lspci -D` every function", bdf,
        function.dir()));
  }
  // Before any advice to rebind it: a disk or a network card must never be told to leave its driver.
  BAREGPU_RETURN_IF_ERROR(CheckIsGpu(address, paths));
  BAREGPU_ASSIGN_OR_RETURN(std::optional<std::string> group, function.IommuGroup());
  if (!group.has_value()) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "%s has no IOMMU group (%s/iommu_group is missing): the IOMMU is off, and VFIO needs it to confine the "
        "device's DMA. Turn it on: enable VT-d / AMD-Vi in the firmware and add intel_iommu=on iommu=pt (Intel) or "
        "amd_iommu=on iommu=pt (AMD) to the kernel command line (GRUB_CMDLINE_LINUX in /etc/default/grub, then "
        "update-grub and reboot). Or, as root, use the sysfs backend: sysfs:%s",
        bdf, function.dir(), bdf));
  }
  BAREGPU_ASSIGN_OR_RETURN(std::optional<std::string> driver, function.Driver());
  if (!base::PathExists(paths.PciDriver(std::string(kVfioDriver))) &&
      !(driver.has_value() && DriverKeepsGroupViable(*driver) && absl::StrContains(*driver, "vfio"))) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "the vfio-pci driver is not loaded (%s is missing): load it with `modprobe vfio-pci` (as root), then bind "
        "%s to it",
        paths.PciDriver(std::string(kVfioDriver)), bdf));
  }
  BAREGPU_RETURN_IF_ERROR(CheckDriver(paths, address, driver));
  BAREGPU_RETURN_IF_ERROR(CheckGroupViable(paths, address, *group));

  VfioTarget target{*group, paths.VfioGroup(*group), paths.VfioContainer()};
  if (absl::Status s = CheckNodeAccess(target.container_node, who); !s.ok()) {
    if (!absl::IsNotFound(s)) return s;
    return absl::FailedPreconditionError(absl::StrFormat(
        "%s does not exist: the vfio module is not loaded (`modprobe vfio-pci`), or this container was started "
        "without it (--device %s --device %s)",
        target.container_node, target.container_node, target.group_node));
  }
  if (absl::Status s = CheckNodeAccess(target.group_node, who); !s.ok()) {
    if (!absl::IsNotFound(s)) return s;
    return absl::FailedPreconditionError(absl::StrFormat(
        "%s does not exist although %s is bound to vfio-pci in IOMMU group %s: wait for udev (`udevadm settle`), "
        "or pass it into this container (--device %s)",
        target.group_node, bdf, *group, target.group_node));
  }
  return target;
}

absl::Status MapDmaError(int err, uint64_t size, uint64_t iova) {
  const std::string what = absl::StrFormat("VFIO_IOMMU_MAP_DMA of %#x bytes at IOVA %#x", size, iova);
  if (err != ENOMEM) return base::ErrnoError(err, what);
  struct rlimit limit {};
  std::string current = "unknown";
  if (::getrlimit(RLIMIT_MEMLOCK, &limit) == 0) {
    current = limit.rlim_cur == RLIM_INFINITY ? "unlimited" : absl::StrFormat("%d KiB", limit.rlim_cur >> 10);
  }
  const std::string user = UserName(geteuid());
  return absl::ResourceExhaustedError(absl::StrFormat(
      "%s: ENOMEM: pinning it would exceed RLIMIT_MEMLOCK (now %s; VFIO pins every DMA page). Raise it: "
      "`ulimit -l unlimited` in the shell that runs baregpu (as root), or add `%s - memlock unlimited` to "
      "/etc/security/limits.conf and log in again (LimitMEMLOCK=infinity for a systemd service)",
      what, current, user));
}

}  // namespace pci
