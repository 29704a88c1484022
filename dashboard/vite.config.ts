import { defineConfig } from 'vite';
import react from '@vitejs/plugin-react';

// Served by the gateway under /dashboard; hashed file names under assets/ are cached for good.
export default defineConfig({
  root: import.meta.dirname,
  base: '/dashboard/',
  plugins: [react()],
  build: { outDir: 'dist', emptyOutDir: true, assetsDir: 'assets', sourcemap: false },
});
