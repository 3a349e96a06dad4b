import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

// In `vite` dev mode the dashboard-api (default port 3000) serves /api and /socket.io;
// in the demo it serves web/dist itself, so the built app uses relative URLs only.
const target = process.env.DASHBOARD_API_URL ?? 'http://127.0.0.1:3000';

export default defineConfig({
  plugins: [react()],
  server: {
    port: 5173,
    proxy: {
      '/api': target,
      '/socket.io': { target, ws: true },
    },
  },
  // One bundle: recharts + react + zod (the contract's schemas check every message) come to
  // ~250 kB gzipped, served from the same machine; splitting buys nothing here.
  build: { outDir: 'dist', sourcemap: true, chunkSizeWarningLimit: 1_200 },
});
