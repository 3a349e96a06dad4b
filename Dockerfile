# One image for every service of the workspace; docker-compose.yml picks the entry point.
# Not built on the machines this project is developed on (no Docker engine there): the
# compose file is validated by packages/demo/test/docker-compose.test.ts instead.
FROM node:20-bookworm-slim
WORKDIR /app
COPY . .
RUN node scripts/pnpm.mjs install --frozen-lockfile && node scripts/pnpm.mjs --filter @outbox/web --if-present run build
ENV NODE_ENV=production
EXPOSE 3000 3001 3002 3004
