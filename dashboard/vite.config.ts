import { defineConfig } from 'vite';
import react from '@vitejs/plugin-react';

// Served by the gateway under /dashboard; hashed file names under assets/ are cached for good.
export default defineConfig({
  root: import.meta.dirname,
  base: '/dashboard/',
  plugins: [react()],
  // Always React's production build, even when built under the test runner (NODE_ENV=test).
  define: { 'process.env.NODE_ENV': JSON.stringify('production') },
  build: { outDir: 'dist', emptyOutDir: true, assetsDir: 'assets', sourcemap: false },
});
