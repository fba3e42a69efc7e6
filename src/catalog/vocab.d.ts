// The built vocabulary file (scripts/vocabulary.ts): a `with { type: "file" }` import gives the
// file's path (inside the compiled executable too).
declare module "*.vocab" {
  const path: string;
  export default path;
}
