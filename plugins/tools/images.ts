/**
 * Image helpers (pi 1.6's `resizeImage`, `convertToPng`, `formatDimensionNote`): shrink an image
 * to fit the size a provider accepts, re-encode images as PNG (terminal image protocols want
 * PNG), and say how a shrunk image's coordinates map back to the original.
 *
 * Decoding, resizing and encoding use Photon (`@silvia-odwyer/photon-node`, a Rust/WASM build:
 * one 1.9 MB .wasm file, no native code), loaded on the first call only; it reads PNG, JPEG,
 * GIF, WebP, BMP, TIFF and ICO. When it cannot load, the functions resolve to null, as 1.6's do.
 */
import { createRequire } from "node:module";
import type * as PhotonModule from "@silvia-odwyer/photon-node";

type Photon = typeof PhotonModule;
type PhotonImage = PhotonModule.PhotonImage;

export interface ImageResizeOptions {
  /** Default 2000. */
  maxWidth?: number;
  /** Default 2000. */
  maxHeight?: number;
  /** Limit of the base64 text, in bytes. Default 4.5 MB (under the 5 MB providers accept). */
  maxBytes?: number;
  /** Quality of the first JPEG tried. Default 80. */
  jpegQuality?: number;
}

export interface ResizedImage {
  /** Base64. */
  data: string;
  mimeType: string;
  originalWidth: number;
  originalHeight: number;
  width: number;
  height: number;
  wasResized: boolean;
}

const DEFAULTS: Required<ImageResizeOptions> = { maxWidth: 2000, maxHeight: 2000, maxBytes: 4.5 * 1024 * 1024, jpegQuality: 80 };

let photonLoad: Promise<Photon | undefined> | undefined;

/**
 * Photon, loaded once on first use; undefined when it cannot load. Through require (it is a
 * CommonJS package): about half the time of import(), which first scans the module for its exports.
 */
export function loadPhoton(): Promise<Photon | undefined> {
  photonLoad ??= Promise.resolve().then(() => {
    try {
      return createRequire(import.meta.url)("@silvia-odwyer/photon-node") as Photon;
    } catch {
      return undefined;
    }
  });
  return photonLoad;
}

function positive(name: string, value: number): number {
  if (typeof value !== "number" || !Number.isFinite(value) || value <= 0) {
    throw new TypeError(`resizeImage: ${name} must be a positive number, got ${JSON.stringify(value)}`);
  }
  return value;
}

/** The size `bytes` take as base64 text. */
const base64Length = (bytes: number) => Math.ceil(bytes / 3) * 4;

/** Width and height scaled down (keeping the aspect ratio) to fit inside maxWidth × maxHeight. */
function fitInside(width: number, height: number, maxWidth: number, maxHeight: number): [number, number] {
  const scale = Math.min(1, maxWidth / width, maxHeight / height);
  if (scale >= 1) return [width, height];
  return [Math.max(1, Math.min(maxWidth, Math.round(width * scale))), Math.max(1, Math.min(maxHeight, Math.round(height * scale)))];
}

/**
 * Fit an image inside `maxWidth` × `maxHeight` and under `maxBytes` of base64. An image already
 * within every limit comes back as given (`wasResized: false`). Otherwise it is scaled (Lanczos3)
 * and encoded as PNG and as JPEG, and the smaller that fits wins; when neither fits, lower JPEG
 * qualities are tried, then smaller sizes (three quarters each step) down to 1×1. Resolves to null
 * when nothing fits or the bytes are not an image Photon reads.
 */
export async function resizeImage(inputBytes: Uint8Array, mimeType: string, options: ImageResizeOptions = {}): Promise<ResizedImage | null> {
  if (!(inputBytes instanceof Uint8Array)) throw new TypeError("resizeImage: inputBytes must be a Uint8Array (or a Buffer)");
  const opts = { ...DEFAULTS, ...Object.fromEntries(Object.entries(options ?? {}).filter(([, v]) => v !== undefined)) } as Required<ImageResizeOptions>;
  const maxWidth = Math.floor(positive("maxWidth", opts.maxWidth));
  const maxHeight = Math.floor(positive("maxHeight", opts.maxHeight));
  const maxBytes = positive("maxBytes", opts.maxBytes);
  const firstQuality = Math.min(100, Math.max(1, Math.round(positive("jpegQuality", opts.jpegQuality))));

  const photon = await loadPhoton();
  if (!photon) return null;
  let image: PhotonImage | undefined;
  try {
    image = photon.PhotonImage.new_from_byteslice(inputBytes);
    const originalWidth = image.get_width();
    const originalHeight = image.get_height();
    if (originalWidth <= maxWidth && originalHeight <= maxHeight && base64Length(inputBytes.byteLength) < maxBytes) {
      return {
        data: Buffer.from(inputBytes).toString("base64"),
        mimeType: mimeType || "image/png",
        originalWidth,
        originalHeight,
        width: originalWidth,
        height: originalHeight,
        wasResized: false,
      };
    }
    const qualities = [...new Set([firstQuality, 85, 70, 55, 40])];
    let [width, height] = fitInside(originalWidth, originalHeight, maxWidth, maxHeight);
    for (;;) {
      const found = encodeToFit(photon, image, width, height, qualities, maxBytes);
      if (found) return { ...found, originalWidth, originalHeight, width, height, wasResized: true };
      if (width === 1 && height === 1) return null;
      width = Math.max(1, Math.floor(width * 0.75));
      height = Math.max(1, Math.floor(height * 0.75));
    }
  } catch {
    return null;
  } finally {
    image?.free();
  }
}

/** At one size: the smaller of PNG and JPEG (first quality) when it fits, else the first lower-quality JPEG that fits. */
function encodeToFit(photon: Photon, image: PhotonImage, width: number, height: number, qualities: number[], maxBytes: number): { data: string; mimeType: string } | undefined {
  const scaled = photon.resize(image, width, height, photon.SamplingFilter.Lanczos3);
  try {
    const png = Buffer.from(scaled.get_bytes()).toString("base64");
    const jpeg = Buffer.from(scaled.get_bytes_jpeg(qualities[0]!)).toString("base64");
    const both = [
      { data: png, mimeType: "image/png" },
      { data: jpeg, mimeType: "image/jpeg" },
    ].sort((a, b) => a.data.length - b.data.length);
    for (const c of both) if (c.data.length < maxBytes) return c;
    for (const q of qualities.slice(1)) {
      const data = Buffer.from(scaled.get_bytes_jpeg(q)).toString("base64");
      if (data.length < maxBytes) return { data, mimeType: "image/jpeg" };
    }
    return undefined;
  } finally {
    scaled.free();
  }
}

/**
 * The note that goes with a shrunk image, so the model can map coordinates back:
 * `[Image: original 4000x3000, displayed at 2000x1500. Multiply coordinates by 2.00 to map to original image.]`.
 * Undefined when the image was not resized.
 */
export function formatDimensionNote(result: ResizedImage): string | undefined {
  if (!result?.wasResized) return undefined;
  const factor = (result.originalWidth / result.width).toFixed(2);
  return `[Image: original ${result.originalWidth}x${result.originalHeight}, displayed at ${result.width}x${result.height}. Multiply coordinates by ${factor} to map to original image.]`;
}

/**
 * Re-encode a base64 image as PNG. A PNG comes back unchanged; anything Photon cannot read
 * resolves to null.
 */
export async function convertToPng(base64Data: string, mimeType: string): Promise<{ data: string; mimeType: string } | null> {
  if (typeof base64Data !== "string") throw new TypeError("convertToPng: base64Data must be a base64 string");
  if (mimeType === "image/png") return { data: base64Data, mimeType };
  const photon = await loadPhoton();
  if (!photon) return null;
  let image: PhotonImage | undefined;
  try {
    image = photon.PhotonImage.new_from_byteslice(new Uint8Array(Buffer.from(base64Data, "base64")));
    return { data: Buffer.from(image.get_bytes()).toString("base64"), mimeType: "image/png" };
  } catch {
    return null;
  } finally {
    image?.free();
  }
}

/**
 * The read tool's image hook: the image fitted with the default limits, with the dimension note
 * when it was shrunk; null when it cannot be made to fit (or is no image Photon reads).
 */
export async function fitImageForModel(image: { data: string; mimeType: string }): Promise<{ data: string; mimeType: string; note?: string } | null> {
  const fitted = await resizeImage(new Uint8Array(Buffer.from(image.data, "base64")), image.mimeType);
  if (!fitted) return null;
  return fitted.wasResized ? { data: fitted.data, mimeType: fitted.mimeType, note: formatDimensionNote(fitted) } : image;
}
