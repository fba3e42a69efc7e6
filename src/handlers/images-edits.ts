// POST /v1/images/edits: authenticate before reading any upload, stream the multipart body in
// with per-file caps, validate fields and files (mask: PNG with alpha, same size as the image),
// then the shared image path.
import { requireModel } from "../auth/permissions.ts";
import type { Gateway } from "../gateway.ts";
import type { RequestContext } from "../http/context.ts";
import { authenticate } from "../pipeline/authenticate.ts";
import { runImages } from "../pipeline/images.ts";
import type { UploadedImage } from "../upstream/image-job.ts";
import { parseOrThrow } from "../wire/decode.ts";
import { GatewayError } from "../wire/errors.ts";
import { coerceFormFields, EditFieldsSchema, toImageOptions } from "../wire/images.ts";
import { requireImageModel, unknownFields } from "./images.ts";
import { readImageUpload } from "./images-upload.ts";

/** The mask rules of SPEC.md, answered with 400: a PNG with an alpha channel, the image's size. */
export function checkMask(mask: UploadedImage, image: UploadedImage): void {
  const bad = (message: string) => new GatewayError("invalid_request", message, { param: "mask" });
  if (mask.info.format !== "png") {
    throw bad(`mask must be a PNG with an alpha channel, got a ${mask.info.format.toUpperCase()} file`);
  }
  if (!mask.info.hasAlpha) {
    throw bad(
      "mask has no alpha channel; send an RGBA PNG whose fully transparent pixels mark the area to repaint",
    );
  }
  const { width, height } = mask.info;
  if (width !== image.info.width || height !== image.info.height) {
    throw bad(
      `mask is ${width}x${height} but the image is ${image.info.width}x${image.info.height}; they must have the same dimensions`,
    );
  }
}

export async function editImage(ctx: RequestContext, gateway: Gateway): Promise<Response> {
  const principal = authenticate(ctx, gateway);
  const upload = await readImageUpload(ctx.request);
  const body = parseOrThrow(EditFieldsSchema, coerceFormFields(upload.fields));
  const model = requireImageModel(requireModel(principal, body.model));
  const options = toImageOptions(body);
  const [first] = upload.images;
  if (!first) {
    throw new GatewayError("invalid_request", "image is required: attach a PNG, JPEG or WebP file as image", {
      param: "image",
    });
  }
  if (upload.mask) checkMask(upload.mask, first);
  return runImages(ctx, gateway, {
    principal,
    model,
    endpoint: "/v1/images/edits",
    job: {
      kind: "edit",
      options,
      images: upload.images,
      mask: upload.mask,
      extra: unknownFields(body, EditFieldsSchema.entries),
    },
  });
}
