/**
 * An ACP prompt (ContentBlock[]) as our user message: text as is; a resource_link as a line
 * naming the file (the model can read it with its tools); an embedded text resource as its
 * content inside a <context> element (the editor's buffer, unsaved edits included); images as
 * image content. Audio and binary resources have no place in a text prompt and are named only.
 */
export interface PromptMessage {
  text: string;
  images: Array<{ type: "image"; data: string; mimeType: string }>;
}

type Block = Record<string, unknown> & { type?: unknown };

function uriToPath(uri: string): string {
  if (uri.startsWith("file://")) {
    try {
      return decodeURIComponent(new URL(uri).pathname);
    } catch {
      return uri;
    }
  }
  return uri;
}

export function promptToMessage(prompt: unknown, invalid: (field: string) => never): PromptMessage {
  if (!Array.isArray(prompt)) invalid("prompt");
  const parts: string[] = [];
  const images: PromptMessage["images"] = [];
  (prompt as Block[]).forEach((b, i) => {
    const field = `prompt[${i}]`;
    if (!b || typeof b !== "object") invalid(field);
    switch (b.type) {
      case "text":
        if (typeof b.text !== "string") invalid(`${field}.text`);
        parts.push(b.text as string);
        break;
      case "image":
        if (typeof b.data !== "string" || typeof b.mimeType !== "string") invalid(`${field}.data`);
        images.push({ type: "image", data: b.data as string, mimeType: b.mimeType as string });
        break;
      case "resource_link": {
        if (typeof b.uri !== "string") invalid(`${field}.uri`);
        const path = uriToPath(b.uri as string);
        parts.push(`@${path}${typeof b.name === "string" && b.name && !path.endsWith(b.name) ? ` (${b.name})` : ""}`);
        break;
      }
      case "resource": {
        const r = b.resource as Record<string, unknown> | undefined;
        if (!r || typeof r.uri !== "string") invalid(`${field}.resource.uri`);
        const path = uriToPath(r!.uri as string);
        if (typeof r!.text === "string") parts.push(`<context path="${path}">\n${r!.text}\n</context>`);
        else parts.push(`@${path} (binary resource, ${typeof r!.mimeType === "string" ? r!.mimeType : "unknown type"}, not included)`);
        break;
      }
      case "audio":
        parts.push("(an audio clip was attached; this agent cannot use audio)");
        break;
      default:
        invalid(`${field}.type`);
    }
  });
  return { text: parts.join("\n\n"), images };
}
