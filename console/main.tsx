import { render } from 'preact';
import { App } from './app';
import './styles/main.css';

render(<App />, document.getElementById('app')!);
