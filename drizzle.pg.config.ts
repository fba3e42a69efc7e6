import { defineConfig } from "drizzle-kit";

// The PostgreSQL migrations, from the PostgreSQL schema (src/store/schema-pg.ts, beside schema.ts).
export default defineConfig({
  dialect: "postgresql",
  schema: "./src/store/schema-pg.ts",
  out: "./migrations/pg",
});
