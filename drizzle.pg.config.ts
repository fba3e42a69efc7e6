import { defineConfig } from "drizzle-kit";

// The PostgreSQL migrations, from the PostgreSQL schema (src/store/pg/schema.ts, beside schema.ts).
export default defineConfig({
  dialect: "postgresql",
  schema: "./src/store/pg/schema.ts",
  out: "./migrations/pg",
});
