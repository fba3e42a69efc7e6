// POST /v1/images/edits as a table row: its codec streams the multipart body in with per-file
// caps and validates fields and files (mask: PNG with alpha, same size as the image); its job is
// an edit. Served by the image rows' shared run (src/handlers/images.ts `serveImages`).
import { images } from "../endpoints/images/index.ts";
import type { Gateway } from "../gateway.ts";
import type { RequestContext } from "../http/context.ts";
import type { UploadedImage } from "../upstream/image-job.ts";
import { parseOrThrow } from "../wire/decode.ts";
import { GatewayError } from "../wire/errors.ts";
import { coerceFormFields, EditFieldsSchema, toImageOptions } from "../wire/images.ts";
import { type ImageEndpoint, serveImages, unknownFields } from "./images.ts";
import { type ImageUpload, readImageUpload } from "./images-upload.ts";

/** The mask rules, answered with 400: a PNG with an alpha channel, the image's size. */
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

interface EditBody {
  model: string;
  fields: ReturnType<typeof parseEditFields>;
  upload: ImageUpload;
}

function parseEditFields(upload: ImageUpload) {
  return parseOrThrow(EditFieldsSchema, coerceFormFields(upload.fields));
}

const EDITS: ImageEndpoint<EditBody> = {
  path: images.paths.edits,
  decode: async (request) => {
    const upload = await readImageUpload(request);
    const fields = parseEditFields(upload);
    return { model: fields.model, fields, upload };
  },
  job: ({ fields, upload }) => {
    const options = toImageOptions(fields);
    const [first] = upload.images;
    if (!first) {
      throw new GatewayError(
        "invalid_request",
        "image is required: attach a PNG, JPEG or WebP file as image",
        { param: "image" },
      );
    }
    if (upload.mask) checkMask(upload.mask, first);
    return {
      kind: "edit",
      options,
      images: upload.images,
      mask: upload.mask,
      extra: unknownFields(fields, EditFieldsSchema.entries),
    };
  },
};

export function editImage(ctx: RequestContext, gateway: Gateway): Promise<Response> {
  return serveImages(ctx, gateway, EDITS);
}
