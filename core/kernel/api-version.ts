/** The version of the kernel API that plugins declare a semver range against (manifest `kernel`). */
export const KERNEL_API_VERSION = "1.0.0";
