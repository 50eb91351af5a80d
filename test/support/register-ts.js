import { register } from 'node:module';

register('./ts-loader.js', import.meta.url);
